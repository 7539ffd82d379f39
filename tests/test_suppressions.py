"""``FileContext.is_suppressed`` decides from the text when no comment can suppress the code:
the same answer as reading every comment token (``suppressions``), on any text."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jax_codemod.analysis.context import FileContext

REPO = Path(__file__).resolve().parent.parent
CODES = ("JAX001", "JAX002", "JAX005", "JAX006", "F401", "E501")


def exact(ctx: FileContext, code: str, line: int) -> bool:
    """The answer from the comment tokens alone, with no shortcut."""
    suppressions = ctx.suppressions
    if line not in suppressions:
        return False
    codes = suppressions[line]
    return codes is None or any(code.startswith(prefix) for prefix in codes)


def assert_same(text: str) -> None:
    lines = text.count("\n") + text.count("\r") + 2
    for code in CODES:
        ctx = FileContext("s.py", text, ast.Module(body=[], type_ignores=[]))
        answers = [ctx.is_suppressed(code, line) for line in range(lines)]
        assert answers == [exact(FileContext("s.py", text, ctx.tree), code, line) for line in range(lines)], (
            code,
            text,
        )


# Comments and look-alikes: in strings, split across lines, after a lone CR, codes that run on
# past the comment's end, prefixes, other linters' codes, any case.
TEXTS = [
    "x = 1  # noqa: JAX005\n",
    "x = 1  # noqa: F401\ny = 2  # NOQA:jax00\n",
    "x = '# noqa: JAX005'\n",
    'x = """\n# noqa: JAX005\n"""  # noqa: E501\n',
    "x = 1  # noqa: F401\rJAX005 = 2\n",
    "# noqa: F401\rJAX005\n",
    "x = 1  # noqa: F401,\n# JAX005\n",
    "x = 1  # noqa: F401\nJAX005 = 2\n",
    "x = 1  # type: ignore  # noqa: JAX005\n",
    "x = 1  # foo # noqa: E501 JAX001 -- kept\n",
    "x = 1  # codemod: ignore[F401]\n",
    "x = '# codemod: ignore'\n",
    "x = 1  # codemod: ignore[\ny = 2  # ]\n",
    "x = 1  # codemod:ignore[JAX]\n",
    "x = (  # noqa: JAX0\n  1)\n",
    "x = 1  # noqa\ny = 2  # noqa:\n",
    "def f():\n\tx = 1  # noqa: JAX001\n        return x  # noqa: JAX002\n",  # tokenize may reject this
    "x = '''unterminated  # noqa: JAX005\n",
    "x = (1,  # noqa: JAX005\n",
    "s = f'{x}  # noqa: JAX005'  # noqa: JAX002\n",
    "x = 1  # noqa: ſAX005 K1 ıX9\n",
    "x = 1 \\\n  # noqa: JAX005\n",
    "x = 1\x0c  # noqa: JAX005\n",
    "x = 1  # noqa\n",
    "x = 1  # NOQA because of a reason\ny = 2  # noqa :JAX005\n",
    "x = '# noqa'\n",
    "x = 1  # noqa_not\n",
    "",
]


@pytest.mark.parametrize("text", TEXTS)
def test_the_text_gate_agrees_with_the_tokens(text):
    assert_same(text)
    assert_same(text.replace("\n", "\r\n"))
    assert_same(text.replace("\n", "\r"))


def real_sources():
    yield from sorted((REPO / "tests").rglob("*.py"))[:80]
    spec = importlib.util.find_spec("numpy")
    root = Path(next(iter(spec.submodule_search_locations)))
    yield from sorted(root.rglob("*.py"))[:120]


def test_the_text_gate_agrees_with_the_tokens_on_real_files():
    checked = 0
    for path in real_sources():
        text = path.read_text(encoding="utf-8", errors="replace")
        if "noqa" not in text.lower() and "codemod" not in text.lower():
            continue
        checked += 1
        lines = text.count("\n") + 2
        for code in ("JAX001", "JAX005", "F401", "E", "PLR0913"):
            ctx = FileContext(str(path), text, ast.Module(body=[], type_ignores=[]))
            truth = FileContext(str(path), text, ctx.tree)
            assert [ctx.is_suppressed(code, n) for n in range(lines)] == [exact(truth, code, n) for n in range(lines)]
    assert checked > 20


PIECES = st.sampled_from(
    ["# noqa: ", "# NOQA:", "#noqa:", "# noqa", "# noqa ", "# codemod: ignore", "[", "]", "JAX005", "JAX00", "jax001", "F401", ",", " ",
     "\t", "\n", "\r", "\r\n", "'", '"', '"""', "'''", "\\", "x = ", "(", ")", "#", "\x0c", "ſ", "1"]
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(PIECES, max_size=30))
def test_the_text_gate_agrees_with_the_tokens_on_generated_texts(pieces):
    assert_same("".join(pieces))


def test_text_the_tokenizer_rejects_suppresses_nothing():
    # Found by the generated texts above on Python 3.12.1: its tokenizer raised
    # UnicodeDecodeError for a lone CR before a non-ASCII character.
    assert_same("# noqa: \rſ")


def test_a_file_without_a_comment_for_the_code_is_not_tokenized():
    text = "x = 1  # noqa: F841\n" * 200 + "y = 2\n"
    ctx = FileContext("s.py", text, ast.parse(text))
    assert not ctx.is_suppressed("JAX001", 3)
    assert "suppressions" not in ctx.__dict__
    assert FileContext("s.py", text, ctx.tree).suppressions[3] == frozenset({"F841"})


@pytest.mark.parametrize(("comment", "suppressed"), [
    ("# noqa", True), ("# NOQA", True), ("#noqa", True), ("# noqa  (another linter's)", True),
    ("# type: ignore  # noqa", True),
    ("# noqa: E501", False), ("# noqa:E501", False), ("# noqa:", False), ("# noqa: jax is fine", False),
    ("# noqa_not", False), ("# not noqa", False),
])
def test_a_bare_noqa_suppresses_every_code_on_its_line(comment, suppressed):
    """As in ruff and flake8: ``# noqa`` without a colon is every code; with a colon, only the
    codes it lists (none, when what follows does not read as codes)."""
    text = f"import jax\nt = jax.dlpack.to_dlpack(x)  {comment}\nu = jax.dlpack.to_dlpack(x)\n"
    ctx = FileContext("s.py", text, ast.parse(text))
    assert ctx.is_suppressed("JAX005", 2) is suppressed
    assert ctx.is_suppressed("JAX001", 2) is suppressed
    assert not ctx.is_suppressed("JAX005", 3)


def test_a_bare_noqa_silences_the_run(tmp_path):
    from test_cli import invoke

    (tmp_path / "a.py").write_text("import jax.dlpack\nimport torch\n\n"
                                   "t = torch.from_dlpack(jax.dlpack.to_dlpack(x))  # noqa\n"
                                   "u = torch.from_dlpack(jax.dlpack.to_dlpack(x))  # noqa: E501\n")
    code, out, err = invoke(["run", "--check", "--no-cache", "--no-progress", "a.py"], cwd=tmp_path)
    assert code == 1 and "a.py:5:" in out and "a.py:4:" not in out, out + err


@pytest.mark.parametrize("ending", ["\n", "\r\n", "\r"])
def test_a_comment_suppresses_its_own_line_whatever_the_line_endings(ending):
    """A CR-only file was one row to the tokenizer (a StringIO's readline splits at LF only): every
    comment was on line 1, and a ``# noqa`` on line 4 suppressed nothing there."""
    text = ending.join(["import jax", "", "x = 1", "t = jax.dlpack.to_dlpack(x)  # noqa: JAX005", ""])
    ctx = FileContext("s.py", text, ast.parse(text))
    assert ctx.is_suppressed("JAX005", 4) and not ctx.is_suppressed("JAX005", 1)
