"""``blocks.at_own_level``: whether text in a `def` block lies in the function's own scope (not in
a nested `def`, `class` or `lambda`), read from the text without parsing it. JAX001's partial
reading drops a block whose access text all lies so, in a function nothing can trace
(``AccessText._untraced_own_level``): the proof needs every True to be true of the tree.

The claim checked: wherever ``at_own_level`` says True, the innermost function, lambda or class
whose text holds the position (a nested `def`'s decorators included) is the block's own
`def`; and it says True often enough on real code that the check is not vacuous.
"""

from __future__ import annotations

import ast
import bisect
import importlib.util
import textwrap
from pathlib import Path

import pytest
from jax_codemod.analysis.blocks import at_own_level, simple_statement
from jax_codemod.analysis.partial import Cut

TESTS = Path(__file__).parent
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _sources() -> list[Path]:
    found = [
        *(TESTS / "snapshots").rglob("*.py"),
        *(TESTS / "realworld").rglob("*.py"),
        *(TESTS.parent / "examples").rglob("*.py"),
    ]
    spec = importlib.util.find_spec("jax")  # found, not imported
    if spec is not None and spec.origin is not None:
        found += sorted((Path(spec.origin).parent / "_src").glob("*.py"))
    return sorted(found)


SOURCES = _sources()


def _every_class(text: str, begin: int, finish: int) -> bool:
    return True


def checked_positions(text: str) -> tuple[int, int]:
    """(positions checked, positions called at own level) over the `def` blocks of ``text``
    (classes cut into their members): every dot in code. Fails on a True the tree denies."""
    return checked_against_tree(
        text,
        lambda block: _all_of(text, ".", block),
        lambda cut, block, at: at_own_level(text, block, [at], cut.interiors, cut.string_starts),
    )


def _all_of(text: str, char: str, block) -> list[int]:
    found, at = [], text.find(char, block.begin, block.finish)
    while at != -1:
        found.append(at)
        at = text.find(char, at + 1, block.finish)
    return found


def checked_against_tree(text: str, positions, says) -> tuple[int, int]:
    """(positions checked, positions ``says`` holds for) over the `def` blocks of ``text``
    (classes cut into their members), for each block's ``positions(block)`` in code: a position
    ``says(cut, block, at)`` holds for must lie in the function's own scope (its decorators and
    signature: in the module's or the class's). Fails on a True the tree denies."""
    cut = Cut.of(text, _every_class)
    if cut is None or not text.isascii():
        return 0, 0
    tree = ast.parse(text)
    starts = [0]
    for line in text.split("\n"):
        starts.append(starts[-1] + len(line) + 1)

    def offset(line: int, column: int) -> int:
        return starts[line - 1] + column

    spans = []  # (begin, end, node) of every scope, a def's decorators included
    for node in ast.walk(tree):
        if isinstance(node, _SCOPES):
            begin = min([offset(node.lineno, node.col_offset)] + [offset(d.lineno, d.col_offset) for d in getattr(node, "decorator_list", [])])
            spans.append((begin, offset(node.end_lineno, node.end_col_offset), node))
    functions = {node.lineno: node for _, _, node in spans if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    checked = held = 0
    for block in cut.blocks:
        if block.kind != "def":
            continue
        function = functions[bisect.bisect_right(starts, block.header)]
        body = offset(function.body[0].lineno, function.body[0].col_offset)
        for at in positions(block):
            if not cut.in_code(at):
                continue
            checked += 1
            if says(cut, block, at):
                held += 1
                holders = [s for s in spans if s[0] <= at < s[1]]
                innermost = max(holders, key=lambda s: (s[0], -s[1]))[2] if holders else None
                where = (block.name, text[text.rfind("\n", 0, at) + 1 : text.find("\n", at)])
                if at < body and innermost is not function:
                    # In the decorators or the signature: the module's or the class's scope.
                    assert innermost is None or isinstance(innermost, ast.ClassDef), where
                else:
                    assert innermost is function, where
    return checked, held


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_own_level_positions_are_in_the_functions_own_scope(path):
    checked_positions(path.read_text(encoding="utf-8"))


def test_real_code_has_positions_at_own_level():
    checked = own = 0
    for path in SOURCES[:200]:
        one, other = checked_positions(path.read_text(encoding="utf-8"))
        checked, own = checked + one, own + other
    assert own >= 1000 and own < checked


SHAPES = {
    # name: (source, the marked line's verdict); the position is the `.` of `.item()` on the
    # line marked `# <-`.
    "plain": ("def f(x):\n    y = x.item()  # <-\n", True),
    "after_a_nested_def": ("def f(x):\n    def g(z):\n        return z\n    y = x.item()  # <-\n", True),
    "in_a_nested_def": ("def f(x):\n    def g(z):\n        return z.item()  # <-\n    return g\n", False),
    "in_a_decorated_nested_def": ("def f(x):\n    @jax.jit\n    def g(z):\n        return z.item()  # <-\n", False),
    "in_a_nested_decorator": ("def f(x):\n    @deco(x.item())  # <-\n    def g(z):\n        return z\n", False),
    "in_a_lambda": ("def f(x):\n    g = jax.jit(lambda z: z.item())  # <-\n", False),
    "after_a_lambda_on_its_line": ("def f(x):\n    g = (lambda z: z, x.item())  # <-\n", False),
    "in_a_multi_line_lambda": ("def f(x):\n    g = jax.jit(lambda z: (\n        z.item()))  # <-\n", False),
    "after_a_lambda_line": ("def f(x):\n    g = jax.jit(lambda z: z)\n    y = g(x).item()  # <-\n", True),
    "in_a_nested_class": ("def f(x):\n    class A:\n        y = x.item()  # <-\n", False),
    "in_an_if": ("def f(x):\n    if x:\n        y = x.item()  # <-\n    else:\n        pass\n", True),
    "in_an_else": ("def f(x):\n    if x:\n        pass\n    else:\n        y = x.item()  # <-\n", True),
    "in_a_with_header": ("def f(x):\n    with g(x.item()):  # <-\n        pass\n", True),
    "in_a_for_header_after_a_lambda": ("def f(x):\n    for y in map(lambda z: z.item(), x):  # <-\n        pass\n", False),
    "in_a_try_except": ("def f(x):\n    try:\n        pass\n    except E:\n        y = x.item()  # <-\n", True),
    "in_a_def_in_an_except": ("def f(x):\n    try:\n        pass\n    except E:\n        def g(z):\n            return z.item()  # <-\n", False),
    "in_a_match": ("def f(x):\n    match x:\n        case 1:\n            y = x.item()  # <-\n", False),
    "after_brackets_spanning_lines": ("def f(x):\n    y = g(\n  1,\n    )\n    z = x.item()  # <-\n", True),
    "a_string_with_brackets": ("def f(x):\n    s = '(['\n    z = x.item()  # <-\n", True),
    "a_comment_with_brackets": ("def f(x):\n    s = 1  # ([\n    z = x.item()  # <-\n", True),
    "a_triple_quoted_string": ('def f(x):\n    s = """\ndef g(y):\n  ("""\n    z = x.item()  # <-\n', True),
    "a_backslash": ("def f(x):\n    s = 1 + \\\n        2\n    z = x.item()  # <-\n", False),
    "one_line_body": ("def f(x): return x.item()  # <-\n", False),
    "one_line_if": ("def f(x):\n    if x: y = x.item()  # <-\n", True),
    "one_line_nested_def": ("def f(x):\n    def g(z): return z.item()  # <-\n", False),
    "in_the_default": ("def f(x=y.item()):  # <-\n    pass\n", True),
    "in_a_lambda_default": ("def f(x=lambda: 1, y=y.item()):  # <-\n    pass\n", False),
    "in_its_decorator": ("@deco(y.item())  # <-\ndef f(x):\n    pass\n", True),
    "in_a_lambda_in_its_decorator": ("@deco(lambda z: z.item())  # <-\ndef f(x):\n    pass\n", False),
    "tabs": ("def f(x):\n\tz = x.item()  # <-\n", False),
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_shapes(name):
    source, expected = SHAPES[name]
    text = "import jax\n\n\n" + textwrap.dedent(source)
    cut = Cut.of(text)
    assert cut is not None
    block = next(b for b in cut.blocks if b.kind == "def")
    marked = text.index("# <-")
    position = text.rindex(".item()", 0, marked)
    assert at_own_level(text, block, [position], cut.interiors, cut.string_starts) is expected
    if expected:
        checked_positions(text)  # and the tree agrees


_COMPOUND = (
    ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.Match,
    ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
)


@pytest.mark.parametrize("path", SOURCES[:150], ids=lambda p: p.name)
def test_a_simple_statement_is_no_compound_one(path):
    """``simple_statement`` against ``ast``: every statement that starts on the line of a block
    it calls simple (top-level, or a member of a class body) is a simple statement, so no
    function holds its code but a lambda's."""
    text = path.read_text(encoding="utf-8")
    cut = Cut.of(text, _every_class)
    if cut is None:
        return
    tree = ast.parse(text)
    statements = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef)):
            for statement in node.body:
                statements.setdefault(statement.lineno, []).append(statement)
    for block in cut.blocks:
        if simple_statement(text, block):
            line = text.count("\n", 0, block.header) + 1
            assert not any(isinstance(s, _COMPOUND) for s in statements.get(line, [])), (path.name, line)
