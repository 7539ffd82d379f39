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


def test_definitions_from_statements_alone_match_those_from_every_node():
    """Without ``:=`` only statements, handlers and match patterns bind: collecting them alone
    gives every scope the same definitions, in the same order, as walking all of its nodes."""
    import ast as _ast
    from pathlib import Path

    from jax_codemod.analysis import scopes as scopes_module

    repo = Path(__file__).resolve().parent.parent
    sources = [p.read_text(encoding="utf-8") for p in sorted((repo / "codemods").rglob("*.py"))]
    sources += [p.read_text(encoding="utf-8") for p in sorted((repo / "tests" / "snapshots").rglob("*.py"))]
    sources.append(
        "import a\nglobal g\ndef f(x):\n    global h\n    try:\n        y = 1\n    except E as e:\n        del y\n"
        "    match x:\n        case [p, *rest] | {'k': p, **rest}:\n            q = p\n        case C(z) if z:\n            pass\n"
        "    for i, (j, k) in x:\n        with o as (w, v):\n            import b.c as d\n    class K:\n        n: int\n"
        "    return [m for m in x]\n"
    )
    checked = 0
    for text in sources:
        if ":=" in text:
            continue
        tree = _ast.parse(text)
        for scope in _ast.walk(tree):
            if isinstance(scope, scopes_module.SCOPES):
                assert scopes_module._collect(scope, walrus=False) == scopes_module._collect(scope), scope
                everything = {n for node in scopes_module.scope_nodes(scope) if isinstance(node, (_ast.Global, _ast.Nonlocal)) for n in node.names}
                statements = {n for node in scopes_module._binding_nodes(scope, walrus=False) if isinstance(node, (_ast.Global, _ast.Nonlocal)) for n in node.names}
                assert statements == everything
                checked += 1
    assert checked > 500


def test_children_are_the_child_nodes_but_contexts_and_operators_in_order():
    """``children`` skips fields by name: on every node of real code (the standard library's
    ast, dataclasses and this package, with matches, f-strings, comprehensions, lambdas, async
    code and star-expressions) it gives what ``ast.iter_child_nodes`` gives, expression
    contexts and operators left out, in the same order."""
    import dataclasses
    import inspect

    import jax_codemod.rules.traced_concrete_access as jax001
    from jax_codemod.analysis import values
    from jax_codemod.analysis.scopes import children

    extra = textwrap.dedent(
        """
        match p:
            case [1, *rest] | {"k": None, **kw} if rest: pass
            case Point(x=0, y=True) as q: pass
        async def f(a, /, b=1, *c, d: int = 2, **e) -> None:
            async with g() as (h, i):
                async for j in k: print(f"{j!r:>{w}}", -j, not j, j < 1 <= 2)
            return [x async for x in y if x] or {a: b for a, b in z} or (lambda q=1: q)
        global G; del H[0]; t: list[int] = []; u @= v; raise E from F
        try: pass
        except* ValueError as err: pass
        """
    )
    trees = [ast.parse(inspect.getsource(m)) for m in (ast, dataclasses, values, jax001)]
    trees.append(ast.parse(extra))
    shared = (ast.expr_context, ast.operator, ast.unaryop, ast.boolop, ast.cmpop)
    checked = 0
    for tree in trees:
        for node in ast.walk(tree):
            expected = [c for c in ast.iter_child_nodes(node) if not isinstance(c, shared)]
            assert children(node) == expected, ast.dump(node)[:200]
            checked += 1
    assert checked > 20000


def test_every_arm_of_an_if_defines_it():
    source = "def f(c):\n    if c:\n        x = 1\n    elif d:\n        raise E\n    else:\n        x = 2\n    print(x)\n"
    assert _reaching_lines(source) == ([3, 7], True)
    one_arm = "def f(c):\n    if c:\n        x = 1\n    elif d:\n        pass\n    else:\n        x = 2\n    print(x)\n"
    assert _reaching_lines(one_arm) == ([3, 7], False)


def test_bound_locally_and_may_reach():
    ctx, scopes, use = _setup(
        "from jax.dlpack import x\n\ndef f():\n    from torch.utils.dlpack import x\n    return x\n\ndef g():\n    return x\n"
    )
    reads = sorted((n for n in ast.walk(ctx.tree) if isinstance(n, ast.Name) and n.id == "x"), key=lambda n: n.lineno)
    in_f, in_g = reads
    assert [d.node.lineno for d in scopes.may_reach(in_f)] == [4]
    assert [d.node.lineno for d in scopes.may_reach(in_g)] == [1]
    assert scopes.bound_locally("x", in_f) and not scopes.bound_locally("x", in_g)
