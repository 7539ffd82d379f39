"""``Spellings._factory`` reads a module-level function's returns one by one and stops at the
first that is no transform (the walk gives the last statement first): the answer must be the
one reading every return first gives. Checked here against that reading, written out, on every
module-level function of real code and on factories of each shape."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import jax
import pytest
from jax_codemod.analysis.context import FileContext
from jax_codemod.analysis.transforms import Spellings, Transform, _Factory, _own_nodes, _own_statements

TESTS = Path(__file__).parent
FACTORIES = textwrap.dedent(
    """
    import functools, jax

    def compile(fn):
        return jax.jit(fn, static_argnums=0)

    def options(**kw):
        return functools.partial(jax.jit, **kw)

    def either(fn=None, *, donate=()):
        if fn is None:
            return functools.partial(jax.jit, donate_argnums=donate)
        return jax.jit(fn, donate_argnums=donate)

    def mixed(fn, fast):
        if fast:
            return jax.jit(fn)
        return fn

    def two_transforms(fn, mapped):
        if mapped:
            return jax.vmap(fn)
        return jax.jit(fn)

    def generator(fn):
        yield jax.jit(fn)
        return jax.jit(fn)

    def nested(fn):
        def inner(x):
            return x
        return jax.jit(fn)
    """
)


def read_every_return(spellings: Spellings, function: ast.FunctionDef) -> _Factory | None:
    """``_factory`` as first written: every return read, then the checks."""
    returns = [node for node in _own_statements(function) if isinstance(node, ast.Return)]
    if not returns:
        return None
    found = [spellings._returned(function, r.value) for r in returns]
    if any(f is None for f in found):
        return None
    if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in _own_nodes(function)):
        return None
    transforms = {(t.name, tuple(ast.dump(k) for k in t.options)) for t, _ in found}
    if len(transforms) != 1:
        return None
    returned = found[0][0]
    bare = any(takes for _, takes in found)
    called = any(not takes for _, takes in found)
    return _Factory(function, Transform(returned.name, returned.options, "factory", returned.readable), bare, called)


def _texts() -> list[tuple[str, str]]:
    paths = [*sorted((TESTS / "realworld").rglob("*.py")), *sorted((TESTS.parent / "examples").rglob("*.py"))]
    paths += sorted((Path(jax.__file__).parent / "_src").glob("*.py"))[:40]
    return [("factories", FACTORIES), *((path.name, path.read_text(encoding="utf-8")) for path in paths)]


@pytest.mark.parametrize(("name", "text"), _texts(), ids=[name for name, _ in _texts()])
def test_the_first_return_that_is_no_transform_decides(name, text):
    ctx = FileContext(name, text, ast.parse(text))
    spellings = Spellings(ctx)
    for statement in ctx.tree.body:
        if isinstance(statement, ast.FunctionDef):
            assert spellings._factory(statement) == read_every_return(spellings, statement), (name, statement.name)


def test_factories_of_each_shape():
    ctx = FileContext("f.py", FACTORIES, ast.parse(FACTORIES))
    assert sorted(Spellings(ctx).factories) == ["compile", "either", "nested", "options"]
