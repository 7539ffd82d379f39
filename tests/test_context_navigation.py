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
    assert set(ctx.__dict__["_statement_parents"]) == {7}


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
    everything = list(context._statements(tree.body))
    imports = [node for node in everything if isinstance(node, (ast.Import, ast.ImportFrom))]
    assert [node for node in context._import_statements(tree.body, text)
            if isinstance(node, (ast.Import, ast.ImportFrom))] == imports
    monkeypatch.setattr(context, "_import_statements", lambda body, _text: context._statements(body))
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
