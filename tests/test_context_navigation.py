"""``FileContext.parent``/``ancestors`` answer from per-statement parent maps: the same as a whole-tree map."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest
from jax_codemod.analysis.context import FileContext

REPO = Path(__file__).resolve().parent.parent
TRICKY = '''
import jax
a = 1; b = jax.jit(lambda x: x)(a); c = [y for y in range(b)]
@jax.jit
@(lambda f: f)
def f(x, *, y=jax.numpy.zeros(3)):
    class K:
        def g(self): return (lambda: x.devices())()
    try:
        pass
    except* ValueError as e:
        match x:
            case [1, *rest] if rest: return e
    return K
if True: d = 1; e = (
    2)
'''


def whole_tree_parents(tree: ast.AST) -> dict:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def sources():
    yield "tricky.py", TRICKY
    for path in sorted((REPO / "tests" / "snapshots").rglob("*.py"))[:40]:
        yield str(path), path.read_text()
    spec = importlib.util.find_spec("jax")
    for name in ("_src/core.py", "_src/api.py"):
        path = Path(next(iter(spec.submodule_search_locations))) / name
        if path.exists():
            yield str(path), path.read_text()


@pytest.mark.parametrize(("path", "text"), list(sources()), ids=lambda value: Path(value).name[:40])
def test_ancestors_match_a_whole_tree_parent_map(path, text):
    tree = ast.parse(text)
    expected = whole_tree_parents(tree)
    ctx = FileContext(path, text, tree)
    for node in ast.walk(tree):
        if not hasattr(node, "lineno"):
            continue  # contexts and operators are shared singletons: no one parent
        chain = []
        current = expected.get(node)
        while current is not None:
            chain.append(current)
            current = expected.get(current)
        assert list(ctx.ancestors(node)) == chain, (path, ast.dump(node)[:80])
        assert ctx.parent(node) is (chain[0] if chain else None)


def test_only_the_statements_asked_about_get_a_parent_map():
    text = "".join(f"def f{i}(x):\n    return x + {i}\n" for i in range(50))
    tree = ast.parse(text)
    ctx = FileContext("m.py", text, tree)
    name = tree.body[7].body[0].value.left
    assert [type(a).__name__ for a in ctx.ancestors(name)] == ["BinOp", "Return", "FunctionDef", "Module"]
    assert "_parents" not in ctx.__dict__
    assert set(ctx.__dict__["_levels"]) == {tree, tree.body[7], tree.body[7].body[0]}


def test_a_method_maps_only_itself_not_its_class():
    """A test module is one class holding every method: asking about a node in one method
    maps that method, not the class's other methods."""
    text = "class FooTest(Base):\n" + "".join(
        f"    @dec\n    def test_{i}(self, x=[y for y in z]):\n        with a as b:\n            return x + {i}\n"
        for i in range(40)
    )
    tree = ast.parse(text)
    ctx = FileContext("m.py", text, tree)
    method = tree.body[0].body[9]
    name = method.body[0].body[0].value.left
    chain = [type(a).__name__ for a in ctx.ancestors(name)]
    assert chain == ["BinOp", "Return", "With", "FunctionDef", "ClassDef", "Module"]
    known = ctx.__dict__["_known_parents"]
    other = tree.body[0].body[10]
    assert other in known and other.body[0] not in known  # the sibling is seen, not entered
    assert not any(node in known for node in ast.walk(other.body[0]))
    assert "_parents" not in ctx.__dict__


def test_a_node_from_another_tree_has_no_ancestors():
    ctx = FileContext("m.py", "x = 1\n", ast.parse("x = 1\n"))
    foreign = ast.parse("x = 1\n").body[0].value
    assert list(ctx.ancestors(foreign)) == []
    assert ctx.parent(ctx.tree) is None


IMPORTS = '''
import os
def f():
    import numpy as np
    def g():
        from jax import \\
            numpy as jnp
        return jnp
    return np
class C:
    try:
        pass
    except ImportError:
        from torch import (
            from_dlpack,
        )
    else:
        import jax.dlpack as jdl
match os.name:
    case "nt":
        import ntpath as p
    case _:
        import posixpath as p
x = "import nothing"
if x: import a.b.c; import a.b.d as e
'''


def test_bindings_see_every_import_however_nested():
    tree = ast.parse(IMPORTS)
    ctx = FileContext("m.py", IMPORTS, tree)
    assert ctx.qualname(ast.parse("jnp.zeros", mode="eval").body) == "jax.numpy.zeros"
    assert ctx.qualname(ast.parse("from_dlpack", mode="eval").body) == "torch.from_dlpack"
    assert ctx.qualname(ast.parse("jdl.to_dlpack", mode="eval").body) == "jax.dlpack.to_dlpack"
    assert ctx.qualname(ast.parse("e.f", mode="eval").body) == "a.b.d.f"
    assert not ctx.qualname(ast.parse("p.join", mode="eval").body)  # two different imports: ambiguous


@pytest.mark.parametrize(("path", "text"), [*sources(), ("imports.py", IMPORTS),
                                            ("cr.py", IMPORTS.replace("\n", "\r\n"))],
                         ids=lambda value: Path(value).name[:40])
def test_bindings_match_a_walk_of_every_statement(path, text, monkeypatch):
    from jax_codemod.analysis import context

    tree = ast.parse(text)
    pruned = FileContext(path, text, tree)._bindings
    everything = list(context.statements(tree.body))
    imports = [node for node in everything if isinstance(node, (ast.Import, ast.ImportFrom))]
    assert [node for node in context._import_statements(tree.body, text)
            if isinstance(node, (ast.Import, ast.ImportFrom))] == imports
    monkeypatch.setattr(context, "_import_statements", lambda body, _text: context.statements(body))
    assert pruned == FileContext(path, text, tree)._bindings


@pytest.mark.parametrize("ending", ["\n", "\r\n", "\r"])
def test_source_of_is_get_source_segment(ending):
    text = ending.join(["x = {'é': 1,", "     'b': [2,", "\x0c           3]}", "y = f(x['é'], (x", "  ))", ""])
    tree = ast.parse(text)
    ctx = FileContext("t.py", text, tree)
    nodes = [node for node in ast.walk(tree) if getattr(node, "end_lineno", None) is not None]
    assert len(nodes) > 15
    for node in nodes:
        assert ctx.source_of(node) == ast.get_source_segment(text, node)


# Shapes where lines, statements and nodes do not line up one to one.
ADVERSARIAL = [
    "a = 1; b = f(a); c = [y for y in range(b) if y]\n",
    "if x: a = 1; b = (\n  2); c = lambda q=(\n 3): q\nelse: d = 4\n",
    "x = (1,\n2); y = 3; z = [\n4]\nw = 5\n",
    "@a\n@b.c(\n  d)\nclass C(D, metaclass=M):\n    @e\n    def f(self, *a, k=lambda: 1, **kw) -> g: return [i for i in a]\n    x: int = 1; y = 2\n",
    "def f():\n    def g():\n        def h(): return 1\n        return h\n    return g\nclass K: pass\n",
    "try:\n    a\nexcept* (A, B) as e:\n    b\nelse:\n    c\nfinally:\n    d\n",
    "match p:\n    case [1, *rest] if rest: a = rest\n    case {'k': v, **kw}: b = v\n    case C(x=1) | None: pass\n    case _: c\n",
    "with (open(a) as b,\n      open(c) as d):\n    e = {k: v for k, v in b}; f = {*d}\n",
    "async def f():\n    async with a as b:\n        async for c in b:\n            await c\n    return [x async for x in b]\n",
    "x = f'{a}{b!r:>{w}} {\"nested\"}'; y = f'''\n{c +\n d}\n'''\n",
    "s = ('a'\n     'b'); t = \\\n  u + \\\n  v\n",
    "global g\ndef f():\n    nonlocal_ = 1\n    global g; g = (yield)\n    del g, h[1], i.j\n    assert k, (m := 2)\n",
    "for i in range(3):\n    if i: continue\n    while j: break\nelse:\n    pass\n",
    "class A: x = 1; y = [x for _ in ()]; z = lambda: (w := 3)\n",
    "if a:\n    pass\nelif b:\n    pass\nelif c: d = 1\nelse:\n    e\n",
    "lambda: (yield)\nf(*a, **k, x=1)\nx[1:2, ::3, ...] = y\n",
    "x = not a < b < c and d or -e\n",
    "\n\n\n",
    "pass",
]


def all_parent_sources():
    yield from sources()
    for index, text in enumerate(ADVERSARIAL):
        yield f"adversarial{index}.py", text
    numpy_spec = importlib.util.find_spec("numpy")
    root = Path(next(iter(numpy_spec.submodule_search_locations)))
    for name in ("_core/tests/test_multiarray.py", "lib/tests/test_function_base.py", "ma/core.py"):
        if (root / name).exists():
            yield str(root / name), (root / name).read_text()


_SHARED = (ast.expr_context, ast.boolop, ast.operator, ast.unaryop, ast.cmpop)


def expected_chains(tree):
    parents = whole_tree_parents(tree)
    for node in ast.walk(tree):
        if isinstance(node, _SHARED):
            continue  # shared by the whole tree: no one parent
        chain, current = [], parents.get(node)
        while current is not None:
            chain.append(current)
            current = parents.get(current)
        yield node, chain


@pytest.mark.parametrize("order", ["walk", "reversed", "shuffled"])
@pytest.mark.parametrize(("path", "text"), list(all_parent_sources()), ids=lambda value: Path(value).name[:40])
def test_every_node_in_any_order_gets_the_whole_tree_answer(path, text, order):
    """The map grows with the questions asked, so the order they come in must not matter;
    nodes without a position (``arguments``, ``comprehension``, ``withitem``) included."""
    import random

    tree = ast.parse(text)
    pairs = list(expected_chains(tree))
    if order == "reversed":
        pairs.reverse()
    elif order == "shuffled":
        random.Random(len(text)).shuffle(pairs)
    ctx = FileContext(path, text, tree)
    for node, chain in pairs:
        assert list(ctx.ancestors(node)) == chain, (path, ast.dump(node)[:80])
        assert ctx.parent(node) is (chain[0] if chain else None)
        assert ctx.enclosing_statement(node) is (
            node if isinstance(node, ast.stmt) else next((a for a in chain if isinstance(a, ast.stmt)), None)
        )
        assert ctx.enclosing_function(node) is next(
            (a for a in chain if isinstance(a, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))), None
        )


@pytest.mark.parametrize(("path", "text"), list(all_parent_sources()), ids=lambda value: Path(value).name[:40])
def test_each_node_asked_first_gets_the_whole_tree_answer(path, text):
    """The first question of a fresh context walks down from the module: each node's."""
    tree = ast.parse(text)
    pairs = list(expected_chains(tree))
    step = max(1, len(pairs) // 300)
    for node, chain in pairs[::step]:
        ctx = FileContext(path, text, tree)
        assert list(ctx.ancestors(node)) == chain, (path, ast.dump(node)[:80])
        if hasattr(node, "lineno"):  # a parsed node's lines lead to it: no whole-tree map
            assert "_parents" not in ctx.__dict__, (path, ast.dump(node)[:80])


def test_positions_that_mislead_fall_back_to_the_whole_tree():
    """Nodes placed by hand (no position, a position outside their statement, a statement
    without one) are answered from the whole-tree map, never from a wrong branch."""
    text = "def f(x):\n    y = x + 1\n    return y\nz = 2\n"
    tree = ast.parse(text)
    function = tree.body[0]
    moved = function.body[1].value  # `y` in `return y`: claim it is on the last line
    moved.lineno = moved.end_lineno = 4
    bare = ast.Pass()  # no position at all
    function.body.append(bare)
    nested = ast.If(test=ast.Name("c", ast.Load()), body=[ast.Expr(ast.Name("q", ast.Load()))], orelse=[])
    tree.body.append(nested)  # a statement without a position, and what it holds
    inner = nested.body[0].value
    for node, chain in expected_chains(tree):
        ctx = FileContext("m.py", text, tree)
        assert list(ctx.ancestors(node)) == chain, ast.dump(node)[:80]
    ctx = FileContext("m.py", text, tree)
    assert ctx.parent(moved) is function.body[1]
    assert ctx.parent(bare) is function
    assert list(ctx.ancestors(inner)) == [nested.body[0], nested, tree]


@pytest.mark.filterwarnings("ignore::SyntaxWarning")  # about the generated code
def test_generated_programs_get_the_whole_tree_answer():
    """Programs from Python's grammar (hypothesmith): odd layouts the corpus never shows."""
    hypothesmith = pytest.importorskip("hypothesmith")
    from hypothesis import HealthCheck, given, settings

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(hypothesmith.from_grammar())
    def check(program):
        try:
            tree = ast.parse(program)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return
        pairs = list(expected_chains(tree))
        ctx = FileContext("generated.py", program, tree)
        for node, chain in reversed(pairs):
            assert list(ctx.ancestors(node)) == chain, ast.dump(node)[:80]

    check()
