"""JAX004 details the snapshot cases do not pin down."""

from __future__ import annotations

import jax_codemod
from jax_codemod.engine.config import Config
from jax_codemod.engine.pipeline import Settings, process_source
from jax_codemod.rules.dlpack_without_host_fallback import DlpackWithoutHostFallback


def fix(source: str, unsafe: bool = False):
    settings = Settings(rules=(DlpackWithoutHostFallback(),), unsafe_fixes=unsafe)
    return process_source(source.encode(), "m.py", settings)


def test_opt_in():
    assert DlpackWithoutHostFallback in jax_codemod.RULES
    assert DlpackWithoutHostFallback.DEFAULT_ENABLED is False


def test_one_helper_for_many_exports_and_idempotent():
    source = (
        "import jax.numpy as jnp\nimport numpy as np\nimport torch\n\n"
        "x = jnp.ones(3)\n"
        "a = torch.from_dlpack(x).sum() + np.from_dlpack(x).sum()\n"
        "b = [torch.from_dlpack(x) for _ in range(2)]\n"
    )
    once = fix(source)
    assert once.error is None
    text = once.fixed.decode()
    assert text.count("def _from_dlpack_or_host(") == 1
    assert text.count("_from_dlpack_or_host(torch.from_dlpack, torch.as_tensor, x)") == 2
    assert "_from_dlpack_or_host(np.from_dlpack, np.asarray, x)" in text
    assert "import numpy" not in text.replace("import numpy as np", "", 1)
    assert not fix(text).changed


def test_np_taken_imports_numpy_plainly():
    source = "import jax.numpy as jnp\nimport torch\n\nnp = None\nx = jnp.ones(3)\nt = torch.from_dlpack(x)\n"
    text = fix(source).fixed.decode()
    assert "import numpy\n" in text and "import numpy as np" not in text
    assert "t = torch.as_tensor(numpy.array(x))" in text


def test_statement_sharing_a_line_goes_through_the_helper():
    source = "import jax.numpy as jnp\nimport torch\n\nx = jnp.ones(3); t = torch.from_dlpack(x)\n"
    text = fix(source).fixed.decode()
    assert "x = jnp.ones(3); t = _from_dlpack_or_host(torch.from_dlpack, torch.as_tensor, x)" in text


def test_compound_header_line_goes_through_the_helper():
    source = "import jax.numpy as jnp\nimport torch\n\nx = jnp.ones(3)\nif x.size: t = torch.from_dlpack(x)\n"
    text = fix(source).fixed.decode()
    assert "if x.size: t = _from_dlpack_or_host(torch.from_dlpack, torch.as_tensor, x)" in text


def test_not_selected_by_default_config():
    codes = {rule.CODE for rule in jax_codemod.RULES if rule.DEFAULT_ENABLED}
    assert "JAX004" not in codes and "JAX003" in codes
    assert Config().select is None


def test_existing_helper_is_reused_not_duplicated():
    first = fix("import jax.numpy as jnp\nimport torch\n\nx = jnp.ones(3)\na = torch.from_dlpack(x).sum()\n")
    later = first.fixed.decode() + "b = torch.from_dlpack(x).sum()\n"
    text = fix(later).fixed.decode()
    assert text.count("def _from_dlpack_or_host(") == 1
    assert "b = _from_dlpack_or_host(torch.from_dlpack, torch.as_tensor, x).sum()" in text


def test_consumers_called_through_any_binding_are_found_and_others_are_not_asked():
    """Only names bound by a ``from_dlpack`` import or by a non-import binding can be consumers;
    the rule skips resolving the rest (builtins, defs, other imports), and finds the aliases."""
    source = (
        "import jax.numpy as jnp\nimport torch\nfrom torch import from_dlpack as to_torch\n"
        "from numpy import asarray\n\n"
        "fd = torch.from_dlpack\nx = jnp.ones(3)\n\n"
        "def helper(y):\n    return y\n\n"
        "a = fd(x)\nb = to_torch(x)\nc = len(x)\nd = helper(x)\ne = asarray(x)\n"
        "for conv in (torch.from_dlpack,):\n    f = conv(x)\n"
    )
    result = fix(source)
    lines = sorted(finding.line for finding in result.findings)
    assert lines == [12, 13, 18]  # fd(x), to_torch(x), conv(x); not len, helper or asarray


def test_a_pure_array_method_is_repeated_a_call_of_anything_else_is_not():
    source = (
        "import jax\nimport jax.numpy as jnp\nimport torch\n\n\ndef f(x: jax.Array):\n"
        "    a = torch.from_dlpack(x.astype('float32'))\n"
        "    b = torch.from_dlpack(jnp.asarray(x))\n"
        "    return a, b\n"
    )
    text = fix(source).fixed.decode()
    assert "a = torch.as_tensor(np.array(x.astype('float32')))" in text  # the wrapped statement
    assert "b = _from_dlpack_or_host(torch.from_dlpack, torch.as_tensor, jnp.asarray(x))" in text
