"""``syntax._mask_generics``, the libcst-free path for PEP 695 syntax, gives what the libcst path
gives (the same tree, positions included, or the same error), or declines; on any text."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest
from jax_codemod.engine import syntax

pytestmark = pytest.mark.skipif(sys.version_info >= (3, 12), reason="the fast path runs before Python 3.12 only")

REPO = Path(__file__).resolve().parent.parent

# Each must fail to parse on this interpreter; the first group is what the fast path is for.
TAKEN = [
    "class Box[T]:\n    pass\n",
    "class Box [T] (Base, metaclass=M):\n    x: T\n",
    "@decorator\ndef first[T: (int, float)](pair: tuple[T, T]) -> T:\n    return pair[0]\n",
    "async def run[*Ts, **P](f: Callable[P, tuple[*Ts]]) -> None:\n    await f()\n",
    "class Outer:\n    def m[T: Callable[..., Any]](self, rule: T) -> T:\n        return rule\n",
    "def f[\n    T,\n    U: A | B,\n](x: T) -> U: ...\n",
    "type Pair[T] = tuple[T, T]\n",
    "type BlockDim = Element | Squeezed | Blocked\n",
    "type  Spaced [T,]  =  list[T]\n",
    (
        "import jax\nx = '''\n'''\nclass Tracer[TraceType: Trace](TracerBase, metaclass=TracerMeta):\n    '''doc'''\n"
        "    def f[S](self):\n        type Inner = int\n        return x\n"
    ),
    "class é: pass\ntype Ref = state.AbstractRef | state.TransformedRef  # é\n",
    "type match = int\ntype _ = str\n",
    "class K[T]:\r\n    def g[U](self): pass\r\n",
]
DECLINED_OR_SAME = [
    'doc = """\nclass Fake[T]: inside a string\n"""\nclass Real[T]: pass\n',
    'doc = """\nclass Fake[T]: inside a string\n"""\ntype A = B\n',
    "type X == y\n",
    "type X = a = b\n",
    "type X = int, str\n",
    "type X = yield\n",
    "type X = *a\n",
    "def f[1 + 2](x): pass\n",
    "def f[T: yield](x): pass\n",
    "def f[T: (yield)](x): pass\n",
    "def f[*Ts: int](x): pass\n",
    "def f[](x): pass\n",
    "def f[T = int](x): pass\n",
    "def f[T: 'A'](x): pass\n",
    "def f[T,  # comment\n  U](x): pass\n",
    "def f[T: A if b else C](x): pass\n",
    "def f[T: not_a or b](x): pass\n",
    "def f[T: await x](x): pass\n",
    "def f[T: (x := 1)](x): pass\n",
    "def f[T: lambda: 1](x): pass\n",
    "def f[T U](x): pass\n",
    "def f[T](x): pass\n  bad indent\n",
    "if x: type A = int\n",
    "x = 1; type A = int\n",
    "class A[T]: pass\ntype B = int\nlabel = f\"{names[\"x\"]}\"\n",
    "from __future__ import barry_as_FLUFL\nclass A[T]: pass\nx = f'{1 <> 2}'\n",
    "class A[T]: pass\ntry:\n    pass\nexcept ValueError, TypeError:\n    pass\n",
    "class A[T]: pass\n" + "x = (\n" * 3,
    "def f[T](x): pass\n    \\\n",
    "type X[T = int] = list[T]\n",
    "type \\\nX = int\n",
    "class A[T]: pass\nx = 1 + \\\n  2\ntype \\\n  B = int\n",
    "type X\n",
    "def f[T](x) pass\n",
    "class A[T](\n",
]


def outcome(text: str, fast: bool, monkeypatch) -> tuple:
    try:
        ast.parse(text)
    except SyntaxError as error:
        first = error
    else:
        raise AssertionError(f"parses on this Python: {text!r}")
    with monkeypatch.context() as patch:
        if not fast:
            patch.setattr(syntax, "_mask_generics", lambda _text, _path: None)
        try:
            tree = syntax.parse_newer(text, "t.py", first)
        except SyntaxError as error:
            return ("error", type(error).__name__, error.msg, error.lineno)
    return ("tree", ast.dump(tree, include_attributes=True))


@pytest.mark.parametrize("text", TAKEN)
def test_the_fast_path_takes_plain_generics_and_gives_the_libcst_tree(text, monkeypatch):
    assert syntax._mask_generics(text, "t.py") is not None
    assert outcome(text, True, monkeypatch) == outcome(text, False, monkeypatch)


@pytest.mark.parametrize("text", DECLINED_OR_SAME)
def test_anything_else_gives_what_the_libcst_path_gives(text, monkeypatch):
    assert outcome(text, True, monkeypatch) == outcome(text, False, monkeypatch)


def test_strings_that_look_like_generics_are_not_taken():
    assert syntax._mask_generics('doc = """\nclass Fake[T]: inside a string\n"""\nclass Real[T]: pass\n', "t.py") is None
    assert syntax._mask_generics("type X = int, str\n", "t.py") is None
    assert syntax._mask_generics("def f[T: yield](x): pass\n", "t.py") is None


def test_the_snapshot_and_realworld_sources_with_generics(monkeypatch):
    """Every repository file here that this Python rejects: the same either way."""
    checked = 0
    for path in sorted([*(REPO / "tests").rglob("*.py"), *(REPO / "examples").rglob("*.py")]):
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        try:
            ast.parse(text)
            continue
        except SyntaxError:
            pass
        checked += 1
        assert outcome(text, True, monkeypatch) == outcome(text, False, monkeypatch), path
    assert checked >= 0  # the corpus comparison (bench/same_findings.py) covers real repositories
