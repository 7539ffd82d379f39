"""An inserted helper is indented as the module it goes into, its docstring too, and is known as
ours on the next run (a second run is a no-op)."""

from __future__ import annotations

import ast

import pytest

from jax_codemod.engine.fixer import reindented
from test_cli import invoke

SOURCE = "import jax.numpy as jnp\nimport numpy as np\n\n\ndef f():\n{i}x = jnp.arange(3.0)\n{i}return np.from_dlpack(x)\n"


@pytest.mark.parametrize("indent", ["  ", "\t", "    "], ids=["two-spaces", "tab", "four-spaces"])
def test_inserted_helper_follows_the_module_indent_and_a_second_run_is_a_noop(tmp_path, indent):
    path = tmp_path / "a.py"
    path.write_text(SOURCE.format(i=indent))
    invoke(["run", "--no-cache", "--target-platforms", "cpu,tpu", str(path)])
    fixed = path.read_text()
    assert "ensure_exportable(x)" in fixed
    helper = fixed[fixed.index("def ensure_exportable") : fixed.index("\n\n\ndef f")]
    lines = helper.splitlines()[1:]
    docstring = lines[: next(n for n, line in enumerate(lines) if n and line.strip() == '"""') + 1]
    # The docstring's lines sit one level in, as the module indents (not four spaces under two).
    assert all(line.startswith(indent) and not line[len(indent):][:1].isspace() for line in docstring if line), helper
    code_lines = [line for line in lines[len(docstring):] if line.strip()]
    assert all(line.startswith(indent) for line in code_lines), helper
    ast.parse(fixed)
    code, out, _ = invoke(["run", "--no-cache", "--check", "--target-platforms", "cpu,tpu", str(path)])
    assert code == 0 and path.read_text() == fixed, out


def test_reindented_keeps_partial_levels_and_blank_lines():
    source = 'def f(x):\n    """Doc\n\n    more.\n      kept two over.\n    """\n    if x:\n        return x\n'
    assert reindented(source, "  ") == 'def f(x):\n  """Doc\n\n  more.\n    kept two over.\n  """\n  if x:\n    return x\n'
    assert reindented(source, "    ") is source
