"""``tracing.Region`` is built by one walk that takes a one-line node's subtree whole, and the
traced-function search reads only its functions and calls (``Region.swept``) and asks which
definitions of a name stand in a scope once per name (``Region.defined_in``). Each answer must
be the one the plain walk gives: a node is in the region when one of the lines falls within its
own lines (a decorator, above its def, is not within the def's), with its parents; checked here
against that walk, written out, on code with the shapes that could tell them apart."""

from __future__ import annotations

import ast
import bisect
from pathlib import Path

import pytest

from jax_codemod.analysis.tracing import Region

_LEAVES = (ast.Name, ast.Constant)
_SHARED = (ast.expr_context, ast.boolop, ast.operator, ast.unaryop, ast.cmpop)

SOURCE = '''\
import functools, jax

@jax.jit
def one_line(x): return x + 1

@functools.partial(
    jax.jit, static_argnums=(1,))
def step(x, n):
    y = [v * 2 for v in x if v]
    z = {k: f"{k!r}:{v}" for k, v in
         zip(x, y)}
    return jax.lax.fori_loop(0, n, lambda i, c: c + i, y), z

class Model:
    def __call__(self, x): return jnp.sum(x)

    @staticmethod
    def helper(a,
               b=lambda q: q):
        def f(x): return x
        g = jax.jit(f)
        a = 1; b = jax.vmap(f)(a)
        return g(a), b

def f(x): return x
def f(x): return -x
run = jax.jit(f)
to_host = lambda x: np.asarray(x)
match run:
    case [a, *rest] if a: pass
    case {"k": v, **others}: pass
try:
    pass
except (ValueError,
        TypeError) as e:
    raise e from None
'''


def plain_region(tree: ast.Module, lines: list[int] | None) -> tuple[list[ast.AST], dict[ast.AST, ast.AST]]:
    """The region as first written: every child collected, then kept by its own lines."""
    nodes, parents = [], {}
    stack = [tree]
    while stack:
        node = stack.pop()
        nodes.append(node)
        found = [c for c in ast.iter_child_nodes(node) if not isinstance(c, _SHARED)]
        for child in found:
            if isinstance(child, _LEAVES):
                continue
            everything = lines is None or (isinstance(node, ast.expr) and node.lineno == node.end_lineno)
            start = getattr(child, "lineno", None)
            if not everything and start is not None:
                index = bisect.bisect_left(lines, start)
                if index == len(lines) or lines[index] > child.end_lineno:
                    continue
            parents[child] = node
            stack.append(child)
    return nodes, parents


def _line_sets(text: str) -> list[list[int] | None]:
    count = text.count("\n") + 1
    singles = [[line] for line in range(1, count + 1)]
    return [None, *singles, list(range(1, count + 1, 2)), list(range(2, count + 1, 3)), [count + 5]]


def _sources() -> list[tuple[str, str]]:
    found = [("inline", SOURCE)]
    root = Path(__file__).parent / "realworld"
    found += [(path.name, path.read_text(encoding="utf-8")) for path in sorted(root.glob("*.py"))[:6]]
    return found


@pytest.mark.parametrize(("name", "text"), _sources(), ids=[name for name, _ in _sources()])
def test_region_is_the_plain_walk(name, text):
    tree = ast.parse(text)
    compared = 0
    for lines in _line_sets(text):
        region = Region(tree, lines)
        nodes, parents = plain_region(tree, lines)
        assert region.nodes == nodes, (name, lines)
        assert region.parents == parents, (name, lines)
        assert region.swept == [n for n in nodes if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Call))]
        compared += len(nodes)
    assert compared > 100  # the lines reached code, not only the module


def test_a_decorator_line_alone_does_not_take_its_one_line_def():
    tree = ast.parse(SOURCE)
    decorator_line = SOURCE.splitlines().index("@jax.jit") + 1
    region = Region(tree, [decorator_line])
    assert not [n for n in region.nodes if isinstance(n, ast.FunctionDef)]
    assert region.nodes == plain_region(tree, [decorator_line])[0]


def test_defined_in_is_the_filter_by_scope():
    tree = ast.parse(SOURCE)
    region = Region(tree, None)
    every = region.functions(decorated=True)
    assert len(every["f"]) == 3  # two at module level, one in a method
    scopes = {region.scope_of(node) for node in every["f"]} | {None}
    for scope in scopes:
        expected = [node for node in every["f"] if region.scope_of(node) is scope]
        assert region.defined_in(every["f"], scope) == expected
    assert sorted(n.lineno for n in region.defined_in(every["f"], None)) == [25, 26]
    assert region.defined_in([], None) == []


# ``Tracing._functions_passed`` asks whether a scope stores a passed name (a walk of the scope)
# only while a scope further out defines it: with none, the answer is no function either way.
SCOPES = '''\
import jax

def f(x): return x.item()

def uses_module_f(x):
    return jax.jit(f)(x)

def stores_f(x):
    f = make()
    return jax.jit(f)(x)

def encloses(x):
    def f(y): return y.tolist()
    def inner(z):
        return jax.jit(f)(z)
    def inner_stores(z):
        f = other
        return jax.jit(f)(z)
    def two_deep(z):
        def deeper(w):
            return jax.vmap(f)(w)
        return deeper(z)
    return inner, inner_stores, two_deep

def hides_two_up(x):
    def g(y): return y.item()
    def middle(z):
        g = 1
        def deeper(w):
            return jax.jit(g)(w)
        return deeper(z)
    return middle

def defines_h(x):
    def h(y): return y.item()
    return h

def sibling_h(x):
    h = 2
    return jax.jit(h)(x)

class C:
    def m(self, x):
        f = 3
        return jax.vmap(f)(x)

    def n(self, x):
        return jax.vmap(f)(x)
'''


def _traced(text: str) -> set[tuple[int, str]]:
    from jax_codemod.analysis.context import FileContext
    from jax_codemod.analysis.tracing import tracing_for

    ctx = FileContext("scopes.py", text, ast.parse(text))
    return {(t.node.lineno, t.transform) for t in tracing_for(ctx).traced_functions()}


@pytest.mark.parametrize(("name", "text"), [("scopes", SCOPES), *_sources()], ids=["scopes", *[n for n, _ in _sources()]])
def test_a_store_is_asked_only_where_an_outer_scope_defines_the_name(name, text, monkeypatch):
    shortened = _traced(text)
    # As first written: every scope on the way out asked for its stores.
    monkeypatch.setattr(Region, "defined_outside", lambda self, grouped, scope: True)
    assert shortened == _traced(text), name


def test_which_definition_a_passed_name_is():
    lines = SCOPES.splitlines()

    def line_of(fragment: str) -> int:
        return next(i for i, line in enumerate(lines, 1) if line.strip().startswith(fragment))

    traced = {line for line, _ in _traced(SCOPES)}
    assert line_of("def f(x)") in traced  # uses_module_f and C.n pass the module's f
    assert line_of("def f(y)") in traced  # inner's and deeper's f is encloses' own
    assert line_of("def g(y)") not in traced  # middle's store hides it from deeper
    assert line_of("def h(y)") not in traced  # defined in a sibling scope only
