"""Scopes and reaching definitions, on their own."""

from __future__ import annotations

import ast
import textwrap

from jax_codemod.analysis.context import FileContext
from jax_codemod.analysis.scopes import ITER, Scopes


def _setup(source: str):
    text = textwrap.dedent(source)
    ctx = FileContext("s.py", text, ast.parse(text))
    uses = [
        n
        for n in ast.walk(ctx.tree)
        if isinstance(n, ast.Name) and n.id == "x" and isinstance(n.ctx, ast.Load)
    ]
    use = max(uses, key=lambda n: (n.lineno, n.col_offset))
    return ctx, Scopes(ctx), use


def _reaching_lines(source: str):
    _ctx, scopes, use = _setup(source)
    reaching, complete = scopes.reaching(use)
    return sorted(d.node.lineno for d in reaching), complete


def test_latest_unconditional_definition_hides_earlier_ones():
    assert _reaching_lines("x = 1\nx = 2\nprint(x)\n") == ([2], True)


def test_a_branch_keeps_the_earlier_definition():
    assert _reaching_lines("x = 1\nif c:\n    x = 2\nprint(x)\n") == ([1, 3], True)


def test_use_inside_its_own_assignment_sees_the_previous():
    assert _reaching_lines("x = 1\nx = x + 1\n") == ([1], True)


def test_later_definitions_in_a_loop_reach_an_earlier_use():
    assert _reaching_lines("x = 1\nfor i in r:\n    print(x)\n    x = 2\n") == ([1, 4], True)


def test_definitions_after_the_use_do_not_reach():
    assert _reaching_lines("x = 1\nprint(x)\nx = 2\n") == ([1], True)


def test_tuple_and_for_paths():
    ctx, scopes, _ = _setup("a, (b, x) = f()\nfor k, x in d.items():\n    print(x)\n")
    definitions = scopes.definitions(ctx.tree)["x"]
    assert [d.path for d in definitions] == [(1, 1), (ITER, 1)]


def test_starred_unpacking_is_not_followed():
    ctx, scopes, _ = _setup("a, *x = f()\nprint(x)\n")
    [definition] = scopes.definitions(ctx.tree)["x"]
    assert definition.value is None


def test_function_entry_is_the_parameter_or_the_enclosing_definitions():
    _ctx, scopes, use = _setup("x = 1\ndef f():\n    return x\n")
    parameter, outer, complete = scopes.entry("x", scopes.scope_of(use))
    assert parameter is None and [d.node.lineno for d in outer] == [1] and complete
    _ctx, scopes, use = _setup("x = 1\ndef f(x):\n    return x\n")
    parameter, _, _ = scopes.entry("x", scopes.scope_of(use))
    assert parameter is not None and parameter.arg == "x"


def test_comprehension_and_decorator_scopes():
    ctx, scopes, use = _setup("ys = [x for x in xs]\n")
    assert isinstance(scopes.scope_of(use), ast.ListComp)
    ctx, scopes, use = _setup("@x\ndef f():\n    pass\n")
    assert scopes.scope_of(use) is ctx.tree


def test_global_declaration_resolves_in_the_module():
    ctx, scopes, use = _setup("x = 1\ndef f():\n    global x\n    x = 2\n    return x\n")
    assert scopes.binding_scope(use) is ctx.tree
