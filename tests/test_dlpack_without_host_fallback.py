"""JAX004 details the snapshot cases do not pin down: which target platforms it reports for, what
its messages quote, which guards hold on which platform, and the one helper."""

from __future__ import annotations

import jax_codemod
from jax_codemod.analysis import platforms
from jax_codemod.engine.pipeline import Settings, process_source
from jax_codemod.rules.dlpack_without_host_fallback import DlpackWithoutHostFallback

TPU = {"target-platforms": "cpu,tpu"}


def fix(source: str, options=None, unsafe: bool = False):
    settings = Settings(rules=(DlpackWithoutHostFallback(TPU if options is None else options),), unsafe_fixes=unsafe)
    return process_source(source.encode(), "m.py", settings)


READS = (
    "import jax.numpy as jnp\nimport numpy as np\nimport torch\n\n"
    "x = jnp.ones(3)\n"
    "a = torch.from_dlpack(x)\n"
    "b = np.from_dlpack(x)\n"
    "c = memoryview(x)\n"
    "d = np.frombuffer(x, dtype=np.float32)\n"
    "e = torch.utils.dlpack.from_dlpack(x.__dlpack__())\n"
    "f = np.from_dlpack(x, device='cpu')\n"  # a host copy on every platform
    "g = x.__dlpack__(dl_device=(1, 0))\n"  # likewise
)


def test_on_by_default_and_silent_where_every_platform_exports():
    assert DlpackWithoutHostFallback in jax_codemod.RULES
    assert DlpackWithoutHostFallback.DEFAULT_ENABLED is True
    for options in ({}, {"target-platforms": "cpu,gpu"}, {"target-platforms": "gpu"}):
        result = fix(READS, options)
        assert result.findings == [] and not result.changed
    assert not DlpackWithoutHostFallback({}).prefilter(READS.encode())


def test_each_read_a_tpu_refuses_is_reported_with_the_tpus_own_error():
    result = fix(READS)
    by_line = {finding.line: finding.message for finding in result.findings}
    assert sorted(by_line) == [6, 7, 8, 9, 10]
    assert "raises on TPU: BufferError: __dlpack__ device only supported for CPU and GPU, got platform: tpu" in by_line[6]
    assert "raises on TPU: JaxRuntimeError: INVALID_ARGUMENT: Device TPU_0" in by_line[7]
    assert "Python buffer protocol is only defined for CPU buffers" in by_line[8] and "np.frombuffer" in by_line[9]
    assert "`x.__dlpack__()` of a JAX array raises on TPU: JaxRuntimeError" in by_line[10]


def test_a_plugin_backend_is_named_in_the_message():
    result = fix(READS, {"target-platforms": "cpu,gpu,metal"})
    assert "raises on the `metal` backend: BufferError: __dlpack__ device only supported for CPU, GPU and TPU pinned host, got platform: metal" in result.findings[0].message


def test_one_helper_wraps_every_read_and_a_second_run_changes_nothing():
    once = fix(READS)
    text = once.fixed.decode()
    assert text.count(f"def {platforms.EXPORTABLE_HELPER}(") == 1
    for line in (
        "a = torch.from_dlpack(ensure_exportable(x))",
        "b = np.from_dlpack(ensure_exportable(x))",
        "c = memoryview(ensure_exportable(x))",
        "d = np.frombuffer(ensure_exportable(x), dtype=np.float32)",
        "e = torch.utils.dlpack.from_dlpack(ensure_exportable(x).__dlpack__())",
        "f = np.from_dlpack(x, device='cpu')",
    ):
        assert line in text
    again = fix(text)
    assert not again.changed and again.findings == []


def test_a_guard_holds_only_if_it_catches_what_the_platform_raises_there():
    source = (
        "import jax.numpy as jnp\nimport numpy as np\nimport torch\n\nx = jnp.ones(3)\n"
        "try:\n    a = torch.from_dlpack(x)\nexcept BufferError:\n    a = None\n"  # TPU: BufferError
        "try:\n    b = np.from_dlpack(x)\nexcept BufferError:\n    b = None\n"  # TPU: JaxRuntimeError
        "try:\n    c = np.from_dlpack(x)\nexcept RuntimeError:\n    c = None\n"
        "try:\n    d = np.from_dlpack(x)\nexcept (BufferError, Exception):\n    d = None\n"
    )
    assert [finding.line for finding in fix(source).findings] == [11]


def test_helper_module_option_imports_the_helper():
    result = fix("import jax.numpy as jnp\nimport torch\n\nx = jnp.ones(3)\nt = torch.from_dlpack(x)\n",
                 {**TPU, "helper-module": "proj.interop"})
    text = result.fixed.decode()
    assert "from proj.interop import ensure_exportable" in text and "def ensure_exportable" not in text


def test_a_name_taken_by_something_else_gets_no_fix():
    source = "import jax.numpy as jnp\nimport torch\n\nensure_exportable = print\nx = jnp.ones(3)\nt = torch.from_dlpack(x)\n"
    result = fix(source)
    assert not result.changed and "already taken" in result.findings[0].message


def test_existing_helper_is_reused_not_duplicated():
    first = fix("import jax.numpy as jnp\nimport torch\n\nx = jnp.ones(3)\na = torch.from_dlpack(x).sum()\n")
    later = first.fixed.decode() + "b = torch.from_dlpack(x).sum()\n"
    text = fix(later).fixed.decode()
    assert text.count("def ensure_exportable(") == 1
    assert "b = torch.from_dlpack(ensure_exportable(x)).sum()" in text


def test_consumers_called_through_any_binding_are_found_and_others_are_not_asked():
    """Only bound names (and the builtin ``memoryview``) can be readers: builtins such as ``len``
    are not resolved, and the aliases are found."""
    source = (
        "import jax.numpy as jnp\nimport torch\nfrom torch import from_dlpack as to_torch\n"
        "from numpy import asarray\n\n"
        "fd = torch.from_dlpack\nx = jnp.ones(3)\n\n"
        "def helper(y):\n    return y\n\n"
        "a = fd(x)\nb = to_torch(x)\nc = len(x)\nd = helper(x)\ne = asarray(x)\n"
        "for conv in (torch.from_dlpack,):\n    f = conv(x)\n"
    )
    result = fix(source)
    assert sorted(finding.line for finding in result.findings) == [12, 13, 18]


def test_the_helper_is_the_one_the_execution_cases_and_tpu_probes_run():
    import interop_helpers

    namespace: dict = {}
    exec(platforms.EXPORTABLE_SOURCE, namespace)  # noqa: S102 - the helper's own source
    import inspect

    assert inspect.getsource(interop_helpers.ensure_exportable).strip() == platforms.EXPORTABLE_SOURCE.strip()
