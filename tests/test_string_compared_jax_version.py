"""JAX007 and the version-gate analysis' reading of version strings compared as strings."""

from __future__ import annotations

import textwrap

import pytest
from jax_codemod.engine.pipeline import Settings, check_source, process_source
from jax_codemod.rules.removed_dlpack_api import RemovedDlpackApi
from jax_codemod.rules.string_compared_jax_version import StringComparedJaxVersion

RULE = StringComparedJaxVersion()


def findings(source: str):
    _, found = check_source(textwrap.dedent(source).encode(), "case.py", [RULE])
    return found


def fixed(source: str) -> str:
    result = process_source(textwrap.dedent(source).encode(), "case.py", Settings((RULE,), unsafe_fixes=True))
    assert result.error is None, result.error
    return result.fixed.decode()


@pytest.mark.parametrize(
    ("expression", "replacement"),
    [
        ('jax.__version__ >= "0.7"', "jax.__version_info__ >= (0, 7, 0)"),
        ('jax.__version__ <= "0.5.1"', "jax.__version_info__ <= (0, 5, 1)"),
        ('"0.4" < jax.version.__version__', "(0, 4, 0) < jax.__version_info__"),
        ('jax.__version__[:3] != "0.4"', "jax.__version_info__[:2] != (0, 4)"),
        ('jax.__version__.split(".")[1] > "6"', "jax.__version_info__[1] > 6"),
        ('jax.__version__.split(".")[:2] < ("0", "7")', "jax.__version_info__[:2] < (0, 7)"),
        ('jaxlib.__version__ >= "0.4.31"', "jaxlib.version.__version_info__ >= (0, 4, 31)"),
    ],
)
def test_fix(expression, replacement):
    source = f"import jax\nimport jaxlib\nflag = {expression}\n"
    assert fixed(source) == f"import jax\nimport jaxlib\nflag = {replacement}\n"


@pytest.mark.parametrize(
    "expression",
    [
        'jax.__version__ == "0.4.30"',
        'jax.__version__.split(".")[0] == "0"',
        'int(jax.__version__.split(".")[1]) >= 7',
        'jax.__version_info__ >= (0, 7)',
        'jax.__version__.startswith("0.4")',
        'version >= "0.7"',
    ],
)
def test_no_finding(expression):
    assert findings(f"import jax\nversion = '1'\nflag = {expression}\n") == []


def test_the_fixed_comparison_agrees_with_version_order_on_every_release():
    """The padded tuple gives the version order for releases the string order gets wrong."""
    from packaging.version import Version

    for installed in ("0.4.30", "0.4.4", "0.7.0", "0.7.2", "0.10.2", "0.12.0.1"):
        info = tuple(int(p) for p in installed.split("."))
        for literal in ("0.4.4", "0.7", "0.10"):
            padded = tuple(int(p) for p in literal.split("."))
            padded += (0,) * (3 - len(padded))
            for op in ("__lt__", "__le__", "__gt__", "__ge__"):
                assert getattr(info, op)(padded) == getattr(Version(installed), op)(Version(literal)), (
                    installed, literal, op
                )


# A legacy branch behind a version compared as strings: "0.10.2" >= "0.7" is False.
STRING_GATE = textwrap.dedent(
    """
    import jax
    import torch

    def to_torch(x):
        if jax.__version__ >= "0.7":
            return torch.from_dlpack(x)
        return torch.utils.dlpack.from_dlpack(jax.dlpack.to_dlpack(x))
    """
).encode()


def test_gate_is_read_as_python_computes_it():
    """`if jax.__version__ >= "0.7"` is False on 0.10.2: the legacy branch runs there, so its
    removed call is broken (JAX005 reports it); on 0.8 the string compare is True and the
    legacy branch is dead."""
    source = STRING_GATE
    on = {}
    for target in ("0.10.2", "0.8.0"):
        rule = RemovedDlpackApi({"target-jax-version": target})
        _, found = check_source(source, "case.py", [rule])
        on[target] = [f.line for f in found]
    assert on == {"0.10.2": [8], "0.8.0": []}


def test_a_gate_over_a_target_range_is_read_on_every_release_of_it():
    """Over a range, the string comparison is computed on each release where `to_dlpack` is gone:
    `"0.10.2" >= "0.7"` is False, so a range reaching 0.10 runs the legacy branch; up to 0.9 it
    does not."""
    source = STRING_GATE
    on = {}
    for target in (">=0.4.30", ">=0.7,<0.10", "<0.7"):
        _, found = check_source(source, "case.py", [RemovedDlpackApi({"target-jax-version": target})])
        on[target] = [f.line for f in found]
    assert on == {">=0.4.30": [8], ">=0.7,<0.10": [], "<0.7": []}


@pytest.mark.parametrize(
    "source",
    [
        # a name the module binds to a version string: the comparison's line never says `__version__`
        'from jax import __version__ as jv\n\nif jv >= "0.7":\n    pass\n',
        'from jax.version import __version__ as V\nflag = "0.7" <= V\n',
        'import jax\nJAX_VERSION = jax.__version__\n\n\ndef f():\n    return JAX_VERSION[:3] == "0.4"\n',
        # the version on one line, the operator on the next
        'import jax\nflag = (jax.__version__\n        >= "0.7")\n',
        'import jax\nif (\n    "0.7"\n    > jax.__version__.split(".")[1]\n):\n    pass\n',
    ],
)
def test_a_comparison_is_found_from_the_lines_that_spell_its_version(source):
    assert len(findings(source)) == 1, source


def test_only_the_statements_that_spell_a_version_are_walked():
    """The comparisons looked at are those of the statements on a line that spells a version (or
    a name bound to one), not every `<`, `>`, `==` of the file (warp's context.py: thousands)."""
    import ast

    from jax_codemod.analysis.context import FileContext
    from jax_codemod.rules.string_compared_jax_version import _comparisons

    text = "import jax\n" + "".join(f"a{i} = b < {i}\n" for i in range(50)) + 'old = jax.__version__ < "0.7"\n'
    ctx = FileContext("case.py", text, parse=lambda: ast.parse(text))
    assert [ast.unparse(compare) for compare in _comparisons(ctx)] == ["jax.__version__ < '0.7'"]
