"""analysis/expected_errors.py: code that expects the error a rule's pattern raises."""

from __future__ import annotations

import ast
import textwrap

import pytest
from jax_codemod.analysis.context import FileContext
from jax_codemod.analysis.expected_errors import ERROR_BASES, EXPECTED, INSIDE, ExpectedErrors, covers


def test_error_bases_are_the_installed_classes_mro():
    """The table's bases are what Python's and JAX's classes really inherit from."""
    import builtins

    import jax.errors

    for name, bases in ERROR_BASES.items():
        cls = getattr(jax.errors, name, None) or getattr(builtins, name, None)
        if cls is None:  # XlaRuntimeError: an alias JAX dropped
            continue
        mro = {klass.__name__ for klass in cls.__mro__[1:]}
        assert set(bases) - {"XlaRuntimeError", "JaxRuntimeError"} <= mro, name


@pytest.mark.parametrize(
    ("expected", "raised", "answer"),
    [
        ({"BufferError"}, ("BufferError",), True),
        ({"TypeError"}, ("ConcretizationTypeError",), True),
        ({"Exception"}, ("AttributeError",), True),
        ({"ValueError"}, ("BufferError",), False),
        ({"TracerArrayConversionError"}, ("ConcretizationTypeError",), False),
        ({"ConcretizationTypeError"}, ("TracerBoolConversionError",), True),
        ({"BufferError"}, (), False),
    ],
)
def test_covers(expected, raised, answer):
    assert covers(frozenset(expected), raised) is answer


def judge(source: str, line: int, column: int, raised=("BufferError",), trace_only=False):
    text = textwrap.dedent(source)
    ctx = FileContext("t.py", text, ast.parse(text))
    return ExpectedErrors(ctx).judge((line, column), raised, trace_only)


def test_with_block_of_each_spelling():
    source = """
    import pytest, unittest, numpy as np
    from jax import errors
    with pytest.raises((ValueError, BufferError)):
        a()
    with np.testing.assert_raises_regex(BufferError, "x"):
        b()
    with self.assertRaisesWithLiteralMatch(errors.ConcretizationTypeError, "x"):
        c()
    with pytest.raises(MyError):
        d()
    """
    assert judge(source, 5, 4) == EXPECTED
    assert judge(source, 7, 4) == EXPECTED
    assert judge(source, 9, 4, ("ConcretizationTypeError",)) == EXPECTED
    assert judge(source, 9, 4) == INSIDE
    assert judge(source, 11, 4) == INSIDE  # a class it cannot resolve covers nothing
    assert judge(source, 2, 0) is None


def test_call_form_and_decorators():
    source = """
    import pytest, unittest
    self.assertRaises(BufferError, export, x)
    self.assertRaisesRegex(BufferError, "pattern")
    @pytest.mark.xfail(raises=AttributeError)
    def test_a():
        a()
    @pytest.mark.xfail
    def test_b():
        b()
    @unittest.expectedFailure
    def test_c():
        c()
    """
    assert judge(source, 3, 35) == EXPECTED
    assert judge(source, 7, 4, ("AttributeError",)) == EXPECTED
    assert judge(source, 7, 4) == INSIDE
    assert judge(source, 10, 4) == EXPECTED
    assert judge(source, 13, 4) == EXPECTED


def test_try_blocks_that_fail_unless_the_error_is_raised():
    source = """
    import pytest
    try:
        a()
    except BufferError as error:
        assert "unsharded" in str(error)
    else:
        raise AssertionError("exported")
    try:
        b()
        self.fail("exported")
    except (ValueError, BufferError):
        pass
    try:
        c()
        pytest.fail("exported")
    except Exception:
        pass
    try:
        d()
    except BufferError:
        e()
    try:
        f()
        g()
    except BufferError:
        pass
    else:
        log("exported")
    """
    assert judge(source, 4, 4) == EXPECTED
    assert judge(source, 6, 4) is None  # the handler expects nothing
    assert judge(source, 10, 4) == EXPECTED
    assert judge(source, 11, 4) is None  # the failure itself
    assert judge(source, 15, 4) == EXPECTED  # Exception covers BufferError
    assert judge(source, 15, 4, ("ConcretizationTypeError",)) == EXPECTED
    # A handler is no test: a fallback (`except BufferError: host copy`) expects nothing.
    assert judge(source, 20, 4) is None
    assert judge(source, 24, 4) is None


def test_local_function_runs_where_it_is_used():
    source = """
    import jax, pytest
    def test():
        def f(x):
            return x.item()
        f(1.0)
        with pytest.raises(TypeError):
            jax.jit(f)(1.0)
        g = jax.jit(lambda x: x.tolist())
        with pytest.raises(TypeError):
            g(1.0)
    def test_outside():
        def f(x):
            return x.item()
        jax.jit(f)(1.0)
        with pytest.raises(TypeError):
            jax.jit(f)(1.0)
    """
    traced = ("ConcretizationTypeError",)
    assert judge(source, 5, 15, traced, trace_only=True) == EXPECTED
    # run eagerly, f(1.0) raises a BufferError-kind error outside the block too
    assert judge(source, 5, 15, ("TypeError",), trace_only=False) is None
    assert judge(source, 9, 26, traced, trace_only=True) == EXPECTED
    assert judge(source, 14, 15, traced, trace_only=True) is None


# Judging one position reads only the nodes around it ------------------------------------------

REPO_TESTS = __import__("pathlib").Path(__file__).resolve().parent


def _sources_with_regions() -> list:
    paths = sorted(REPO_TESTS.rglob("*.py"))
    return [p for p in paths if "raises" in (t := p.read_text(encoding="utf-8", errors="replace")) or "fail(" in t]


@pytest.mark.parametrize("path", _sources_with_regions()[:40], ids=lambda p: p.name)
def test_the_regions_around_a_position_are_the_whole_files_that_hold_it(path):
    """``_holding`` (the nodes whose lines hold the position) and ``_innermost_function`` give
    the answers the whole file's regions and functions give, at the start and end of every node."""
    text = path.read_text(encoding="utf-8")
    try:
        tree = ast.parse(text)
    except SyntaxError:
        pytest.skip("not parsable on this Python")
    ctx = FileContext(path.name, text, tree)
    expected = ExpectedErrors(ctx)
    regions = expected.regions
    functions = [
        (ctx.span(n), n) for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
    ]
    for node in ast.walk(tree):
        if not hasattr(node, "lineno"):
            continue
        span = ctx.span(node)
        for position in ((span.start_line, span.start_column), (span.end_line, max(0, span.end_column - 1))):
            assert sorted(expected._holding(position), key=repr) == sorted(
                (r for r in regions if r.holds(position)), key=repr
            ), position
            around = [
                (s.start_line, s.start_column, f) for s, f in functions
                if (s.start_line, s.start_column) <= position < (s.end_line, s.end_column)
            ]
            innermost = max(around, key=lambda a: a[:2])[2] if around else None
            assert expected._innermost_function(position) is innermost, position


def test_a_finding_is_judged_without_walking_the_whole_file():
    """Judging a finding in a large test module walked every node of it for the regions (most
    of ``_settle_expected``'s cost on jax's tests, whose JAX001 findings need no such walk)."""
    text = "import pytest\n" + "".join(
        f"def test_{i}(x):\n    with pytest.raises(ValueError):\n        f(x)\n    return x.item()\n" for i in range(300)
    )
    ctx = FileContext("m.py", text, ast.parse(text))
    expected = ExpectedErrors(ctx)
    assert expected.judge((4 + 4 * 150, 8), ("ValueError",)) == EXPECTED
    assert expected.judge((5 + 4 * 150, 11), ("ConcretizationTypeError",)) is None
    assert "nodes" not in ctx.analysis.__dict__
    assert len(expected._lines) == 2 and len(expected._made) < 10


def test_a_function_at_module_level_is_never_enclosed():
    """``runs_only_under_disable_jit`` answers no for a module-level function or method without
    mapping the file's parents: only where no function encloses it (checked against the map)."""
    from pathlib import Path

    from jax_codemod.analysis.expected_errors import _at_module_level

    source = textwrap.dedent(
        """
        import jax

        @jax.jit
        def top(x): return x
        class A:
            @jax.jit
            def method(self, x):
                def inner(y): return y
                return inner(x)
            class B:
                def nested_method(self): pass
        def outer():
            def f(x): return x
            class Local:
                def m(self): pass
            return f
        x = 1; y = lambda v: v
        """
    )
    root = Path(__file__).parent / "realworld"
    texts = [source, *(path.read_text(encoding="utf-8") for path in sorted(root.glob("*.py"))[:8])]
    at_top = 0
    for text in texts:
        tree = ast.parse(text)
        ctx = FileContext("m.py", text, tree)
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _at_module_level(ctx, node):
                assert ctx.enclosing_function(node) is None, node.name
                at_top += 1
    ctx = FileContext("m.py", source, ast.parse(source))
    named = {n.name: n for n in ast.walk(ctx.tree) if isinstance(n, ast.FunctionDef)}
    assert [name for name, node in named.items() if _at_module_level(ctx, node)] == ["top", "outer", "method"]
    assert at_top > 20
