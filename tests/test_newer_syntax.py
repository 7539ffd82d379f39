"""Files written for a newer Python are checked and fixed the same under every interpreter.

The tree below uses Python 3.12 syntax (PEP 695 generics and ``type``, PEP 701 f-strings),
3.13 syntax (a PEP 696 default) and one construct of 3.14 (PEP 758 ``except A, B:``) that
cannot be checked before 3.14. Findings are compared with a fixed expectation under the
running interpreter, and with what the interpreters in ``CODEMOD_CROSS_PYTHONS``
(colon-separated; `.ci/run` sets it to Python 3.11 and a 3.13 environment with only the
runtime dependencies; a runtime-only 3.10 was compared by hand) report for the same tree.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from jax_codemod.cli.main import main

SOURCES = {
    "generics.py": 'import jax\nimport jax.dlpack\nimport torch\n\n\nclass Box[T]:\n    def __init__(self, value: T) -> None:\n        self.value = value\n\n\ntype Pair[T] = tuple[T, T]\n\n\ndef first[T: (int, float)](pair: Pair[T]) -> T:\n    return pair[0]\n\n\ndef show(x, names):\n    label = f"{names["x"]}: é {torch.from_dlpack(jax.dlpack.to_dlpack(x))!r:>{len(names)}}"\n    return label\n\n\ndef export(x):\n    return torch.from_dlpack(jax.dlpack.to_dlpack(x))\n',
    "more.py": '"""PEP 701 f-strings the way 3.12 code writes them: nested quotes, backslashes, comments, many lines."""\nimport jax.dlpack\nimport numpy as np\nimport torch\n\n\nclass Exporter[T = float]:\n    """A PEP 696 default: Python 3.13 syntax."""\n\n    def to_torch(self, x):\n        return torch.from_dlpack(jax.dlpack.to_dlpack(x))\n\n\ndef describe(x, table):\n    header = f"{"\\n".join(table["rows"])}"\n    body = f"""{\n        np.from_dlpack(jax.dlpack.to_dlpack(x))  # a comment inside a replacement field\n    } and {f"{x!r}"}"""\n    return header + body\n\n\ncapsule = jax.dlpack.to_dlpack(jax.numpy.ones(2))\n',
    "exception_groups.py": (
        "import jax.dlpack\n\ntry:\n    pass\nexcept* ValueError:\n    pass\n\n"
        "y = jax.dlpack.to_dlpack(x)\n"
    ),
    "unparenthesized_except.py": 'import jax.dlpack\n\ntry:\n    pass\nexcept ValueError, TypeError:\n    pass\n\ny = jax.dlpack.to_dlpack(x)\n',
}
EXPECTED = [
    ("exception_groups.py", 8, 5, "JAX005"),  # Python 3.11 syntax, checked on 3.10 too
    ("generics.py", 19, 50, "JAX005"),  # inside a PEP 701 f-string, after non-ASCII text
    ("generics.py", 24, 30, "JAX005"),
    ("more.py", 11, 34, "JAX005"),
    ("more.py", 17, 24, "JAX005"),  # in a multi-line replacement field with a comment
    ("more.py", 22, 11, "JAX005"),
]
NEEDS_314 = sys.version_info < (3, 14)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for name, source in SOURCES.items():
        (tmp_path / name).write_text(source, encoding="utf-8")
    return tmp_path


def run(args) -> tuple[int, str, str]:
    with CliRunner().isolation() as (out, err, _mixed):
        code = main([str(a) for a in args])
        return code, out.getvalue().decode(), err.getvalue().decode()


def report(tree: Path, python: str | None = None) -> dict:
    args = ["run", "--check", "--no-cache", "--target-jax-version", "0.10.2", "--format", "json", "."]
    if python is None:
        previous = os.getcwd()
        os.chdir(tree)
        try:
            code, out, _ = run(args)
        finally:
            os.chdir(previous)
    else:
        done = subprocess.run(
            [python, "-c", "import sys; from jax_codemod.cli.main import main; sys.exit(main(sys.argv[1:]))", *args],
            cwd=tree, capture_output=True, text=True, timeout=300, check=False,
        )
        code, out = done.returncode, done.stdout
        assert out, done.stderr[-3000:]
    data = json.loads(out)
    data["exit"] = code
    return data


def summary(data: dict) -> tuple:
    findings = [(f["path"], f["line"], f["column"], f["code"], f["fix"]) for f in data["findings"]]
    errors = [(e["path"], e["line"]) for e in data["errors"]]
    return findings, errors, data["exit"]


def test_findings_under_this_interpreter(tree):
    findings, errors, code = summary(report(tree))
    assert [f[:4] for f in findings] == EXPECTED
    assert all(f[4] == "safe" for f in findings)
    assert errors == ([("unparenthesized_except.py", 5)] if NEEDS_314 else [])
    assert code == 1


@pytest.mark.skipif(not NEEDS_314, reason="Python 3.14 parses every file of the tree natively")
def test_unhandled_syntax_names_the_python_it_needs(tree):
    data = report(tree)
    (error,) = data["errors"]
    assert error["message"].startswith("not checked: the file uses syntax of Python 3.14+")
    assert "run codemod with Python 3.14 or newer" in error["message"]
    assert data["summary"]["files_failed"] == 1


def cross_pythons() -> list[str]:
    return [p for p in os.environ.get("CODEMOD_CROSS_PYTHONS", "").split(os.pathsep) if p]


@pytest.mark.parametrize("python", cross_pythons() or [None])
def test_same_findings_under_other_interpreters(tree, python):
    if python is None:
        pytest.skip("set CODEMOD_CROSS_PYTHONS to interpreters with jax_codemod installed (.ci/run does)")
    version = subprocess.run([python, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True,
                             text=True, check=True).stdout.strip()
    assert version != str(sys.version_info[:2]), "compare with a different Python"
    assert summary(report(tree, python)) == summary(report(tree))


def test_fix_keeps_the_newer_syntax_and_is_idempotent(tree):
    previous = os.getcwd()
    os.chdir(tree)
    try:
        code, _, _ = run(["run", "--no-cache", "--target-jax-version", "0.10.2", "generics.py", "more.py"])
        assert code == 0
        again = run(["run", "--check", "--no-cache", "--target-jax-version", "0.10.2", "generics.py", "more.py"])
    finally:
        os.chdir(previous)
    assert again[0] == 0
    generics = (tree / "generics.py").read_text(encoding="utf-8")
    assert "to_dlpack" not in generics
    assert "class Box[T]:" in generics and "type Pair[T] = tuple[T, T]" in generics
    assert 'label = f"{names["x"]}: é {torch.from_dlpack(x)!r:>{len(names)}}"' in generics
    more = (tree / "more.py").read_text(encoding="utf-8")
    assert "        np.from_dlpack(x)  # a comment inside a replacement field\n" in more
    assert "capsule = jax.numpy.ones(2).__dlpack__()" in more
    assert "class Exporter[T = float]:" in more


def test_a_file_valid_in_no_python_keeps_the_interpreter_message(tmp_path):
    (tmp_path / "bad.py").write_text("import jax.dlpack\ndef f(:\n    jax.dlpack.to_dlpack(x)\n")
    data = report(tmp_path)
    assert [(e["line"], e["message"]) for e in data["errors"]] == [(2, "cannot parse: invalid syntax")]


CALLS = r"""
import ast, json, sys
out = {}
for path in sys.argv[1:]:
    text = open(path, encoding="utf-8").read()
    try:
        tree = ast.parse(text)
    except SyntaxError as error:
        from jax_codemod.engine.syntax import parse_newer
        tree = parse_newer(text, path, error)
    out[path] = sorted([n.lineno, n.col_offset, n.end_lineno, n.end_col_offset, ast.unparse(n.func)]
                       for n in ast.walk(tree) if isinstance(n, ast.Call))
print(json.dumps(out))
"""


def calls(python: str, tree: Path) -> dict:
    files = ["generics.py", "more.py"]
    done = subprocess.run([python, "-c", CALLS, *files], cwd=tree, capture_output=True, text=True,
                          timeout=300, check=True)
    return json.loads(done.stdout)


@pytest.mark.parametrize("python", cross_pythons() or [None])
def test_every_call_where_the_native_parser_puts_it(tree, python):
    """The masked tree has every call at the byte offsets a Python that knows the syntax reports."""
    if python is None:
        pytest.skip("set CODEMOD_CROSS_PYTHONS to interpreters with jax_codemod installed (.ci/run does)")
    native = [p for p in [python, sys.executable] if subprocess.run(
        [p, "-c", "import sys; sys.exit(sys.version_info < (3, 13))"], check=False).returncode == 0]
    if not native:
        pytest.skip("neither interpreter parses Python 3.13 syntax natively")
    assert calls(sys.executable, tree) == calls(python, tree)


TRICKY = '''import jax.dlpack

doc = """
class Fake[T]: code-like text at column 0 inside a string
"""


def f(x):
    """A docstring
with a line at column 0
    """
    return f"{x["a"]}" + str(jax.dlpack.to_dlpack(x))


class G[T](
    object,
):
    y = f"{'nested ' + f"{1}"}"
'''


def test_regions_cut_inside_strings_are_widened_not_misread():
    import ast

    import libcst as cst
    from jax_codemod.engine import syntax

    try:
        ast.parse(TRICKY)
    except SyntaxError as error:
        tree = syntax.parse_newer(TRICKY, "t.py", error)
    else:
        pytest.skip("this Python parses the file natively")
    whole = syntax._Masker(TRICKY)
    syntax._mask_module(cst, whole, cst.parse_module(TRICKY), 0)
    assert ast.dump(tree, include_attributes=True) == ast.dump(ast.parse(whole.text()), include_attributes=True)
    (call,) = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and ast.unparse(n.func) == "jax.dlpack.to_dlpack"]
    assert (call.lineno, call.col_offset) == (12, 29)  # as Python 3.12+ reports it
    assert ast.get_docstring(tree.body[2], clean=False) == "A docstring\nwith a line at column 0\n    "
