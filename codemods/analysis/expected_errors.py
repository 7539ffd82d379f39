"""Code that expects an error: tests that assert the very error a rule's pattern raises.

``with self.assertRaises(BufferError): torch.from_dlpack(sharded)`` is a test of JAX's own
behaviour, not a bug, and a fix there would make the test fail (the error it asserts goes
away). The engine asks this module about every finding: ``ExpectedErrors.judge`` says
whether the flagged code runs where the error is expected (``EXPECTED``: drop the finding),
runs inside such a block that expects some other error (``INSIDE``: report it, but edit
nothing there), or neither (None).

A block expects an error when it is the body of ``with self.assertRaises*(E)`` (any
receiver), ``with pytest.raises(E)`` or ``numpy.testing.assert_raises(E)``; the callable and
arguments of the call forms (``self.assertRaises(E, f, x)``); or a function decorated
``pytest.mark.xfail(raises=E)`` (without ``raises``: any error) or ``unittest.expectedFailure``;
or the hand-written form, ``try: <body> except E: ...`` whose ``else`` fails (``raise
AssertionError``, ``assert False``, ``self.fail()``, ``pytest.fail()``) or whose body ends failing.
``E`` (a class or a tuple of them) is resolved by qualified name; it covers an error when it is
that class or one of its bases (``TypeError`` covers ``ConcretizationTypeError``).

Code in a local function (or a lambda bound to a local name) runs where that function is
used: the flagged access in ``def f(x): return x.item()`` is expected when every use of ``f``
in the enclosing function (``jax.jit(f)(x)``, or the calls of ``g = jax.jit(f)``) sits in a
block expecting the error. For errors raised only while tracing (``trace_only``), plain calls
of an undecorated ``f`` run it eagerly, where it works, and do not count.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from jax_codemod.analysis import api
from jax_codemod.analysis.scopes import walk_values

if TYPE_CHECKING:  # the value analysis asks this module (``expected_errors_of``): no circle
    from jax_codemod.analysis.context import FileContext

EXPECTED = "expected"
INSIDE = "inside"

# The bases of each error a rule's pattern raises (their MRO on every supported JAX, checked
# against the installed one by tests/test_expected_errors.py). An error not listed has only
# Exception and BaseException above it.
_JAX_TYPE_ERROR = ("JAXTypeError", "TypeError", "Exception", "BaseException")
ERROR_BASES: dict[str, tuple[str, ...]] = {
    "ConcretizationTypeError": _JAX_TYPE_ERROR,
    "TracerArrayConversionError": _JAX_TYPE_ERROR,
    "TracerIntegerConversionError": _JAX_TYPE_ERROR,
    "TracerBoolConversionError": ("ConcretizationTypeError", *_JAX_TYPE_ERROR),
    "TypeError": ("Exception", "BaseException"),
    "JaxRuntimeError": ("XlaRuntimeError", "RuntimeError", "Exception", "BaseException"),
    "XlaRuntimeError": ("JaxRuntimeError", "RuntimeError", "Exception", "BaseException"),
    "ModuleNotFoundError": ("ImportError", "Exception", "BaseException"),
    "KeyError": ("LookupError", "Exception", "BaseException"),
}
_ANY = frozenset({"BaseException"})
_ASSERT_RAISES_FUNCTIONS = frozenset(
    {"pytest.raises", "numpy.testing.assert_raises", "numpy.testing.assert_raises_regex"}
)
_ASSERT_RAISES_LEAVES = frozenset(name.rpartition(".")[2] for name in _ASSERT_RAISES_FUNCTIONS)
_XFAIL = frozenset({"pytest.mark.xfail"})
_EXPECTED_FAILURE = frozenset({"unittest.expectedFailure", "unittest.case.expectedFailure"})
# Where an error class is taken to be the one a rule means: Python's own, or JAX's.
_ERROR_MODULES = ("builtins", "jax", "jaxlib")
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
# Text a file must hold for any block of it to expect an error (`raise AssertionError`,
# `self.fail(`, `pytest.fail(`: ``_try_expecting``'s).
_WORDS = ("assertRaises", "raises", "expectedFailure", "xfail", "assert_raises", "AssertionError", "fail(")
_TRY = (ast.Try, *((ast.TryStar,) if hasattr(ast, "TryStar") else ()))
_FAIL_CALLS = frozenset({"pytest.fail", "unittest.TestCase.fail"})
# What ``ExpectedErrors.regions`` looks at, by node class.
_CALL, _WITH, _DEF, _TRY_KIND = "call", "with", "def", "try"
_REGION_KINDS = {
    ast.Call: _CALL,
    ast.With: _WITH,
    ast.AsyncWith: _WITH,
    ast.FunctionDef: _DEF,
    ast.AsyncFunctionDef: _DEF,
    **dict.fromkeys(_TRY, _TRY_KIND),
}


def _fails(statement: ast.stmt, ctx: FileContext) -> bool:
    """Whether ``statement`` is a test's failure: ``raise AssertionError(...)``, ``assert False``,
    ``self.fail(...)`` or ``pytest.fail(...)``."""
    if isinstance(statement, ast.Raise) and statement.exc is not None:
        raised = statement.exc.func if isinstance(statement.exc, ast.Call) else statement.exc
        return isinstance(raised, ast.Name) and raised.id == "AssertionError" and not ctx.is_bound(raised.id)
    if isinstance(statement, ast.Assert):
        return isinstance(statement.test, ast.Constant) and not statement.test.value
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        func = statement.value.func
        if isinstance(func, ast.Attribute) and func.attr == "fail" and isinstance(func.value, ast.Name) and func.value.id == "self":
            return True
        return ctx.qualname(func) in _FAIL_CALLS
    return False


def covers(expected: frozenset[str], raised: tuple[str, ...]) -> bool:
    """Whether catching ``expected`` (class names) catches every one of ``raised``."""
    if not raised or not expected:
        return False
    return all(
        error in expected or any(base in expected for base in ERROR_BASES.get(error, ("Exception", "BaseException")))
        for error in raised
    )


@dataclass(frozen=True)
class Region:
    """A stretch of code that expects one of ``classes`` (empty: classes it cannot resolve)."""

    start: tuple[int, int]
    end: tuple[int, int]
    classes: frozenset[str]

    def holds(self, position: tuple[int, int]) -> bool:
        return self.start <= position < self.end


def expected_errors_of(ctx: FileContext) -> ExpectedErrors:
    """The file's one ``ExpectedErrors`` (kept on its context)."""
    found = ctx.__dict__.get("_expected_errors")
    if found is None:
        found = ctx.__dict__["_expected_errors"] = ExpectedErrors(ctx)
    return found


class ExpectedErrors:
    """The expected-error blocks of one file, found once (``expected_errors_of``)."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self._asserting_names: dict[str, bool] = {}  # a callee's name -> whether it asserts (``_may_assert``)
        self._lines: dict[int, list[ast.AST]] = {}  # a line -> the nodes whose lines hold it (``_on_line``)
        self._made: dict[ast.AST, list[Region]] = {}  # a node -> the regions it makes (``_regions_of``)

    @cached_property
    def regions(self) -> tuple[Region, ...]:
        """Every expected-error block of the file, in the order of the analysis's node list. The
        questions below need only the blocks around one position (``_holding``)."""
        if not self._may_expect:
            return ()
        found: list[Region] = []
        kinds = _REGION_KINDS
        for node in self.ctx.analysis.nodes:
            kind = kinds.get(node.__class__)
            if kind is not None:
                found.extend(self._regions_of(node, kind))
        return tuple(found)

    @cached_property
    def _may_expect(self) -> bool:
        text = self.ctx.text
        return any(word in text for word in _WORDS)

    def _holding(self, position: tuple[int, int]) -> list[Region]:
        """The regions that hold ``position`` (line, character column). Each is made from a node
        whose span holds it (a ``with``, a call, a ``def``, a ``try``), so only the nodes whose
        lines hold its line are asked (``_on_line``), not the file's every node: the whole-tree
        walk was most of the cost of judging a finding in a large test module (jax's
        api_test.py: 0.2 s for one JAX001 finding, whose rule needs no such walk)."""
        if not self._may_expect:
            return []
        kinds = _REGION_KINDS
        return [
            region
            for node in self._on_line(position[0])
            if (kind := kinds.get(node.__class__)) is not None
            for region in self._regions_of(node, kind)
            if region.holds(position)
        ]

    def _on_line(self, line: int) -> list[ast.AST]:
        """The nodes whose lines (a definition's decorators included) hold ``line``, outermost
        first, found from the module down (each child whose lines do not hold it is passed over,
        with all it holds)."""
        known = self._lines.get(line)
        if known is None:
            known = self._lines[line] = []
            pending = [self.ctx.tree]
            while pending:
                node = pending.pop()
                for child in ast.iter_child_nodes(node):
                    first = getattr(child, "lineno", None)
                    if first is None:  # arguments, a comprehension's clause, a with item...
                        pending.append(child)
                        continue
                    decorators = getattr(child, "decorator_list", None)
                    if decorators:
                        first = min(first, *(d.lineno for d in decorators))
                    if first <= line <= (child.end_lineno or first):
                        known.append(child)
                        pending.append(child)
        return known

    def _regions_of(self, node: ast.AST, kind: str) -> list[Region]:
        """The regions ``node`` (of ``_REGION_KINDS``'s ``kind``) makes, found once per node. A
        call is resolved only when its callee may assert (``_may_assert``)."""
        found = self._made.get(node)
        if found is not None:
            return found
        found = self._made[node] = []
        if kind is _CALL:
            if self._may_assert(node.func):
                classes = self._asserted(node, context=False)
                if classes is not None:
                    found.append(self._region(node, node, classes))
        elif kind is _WITH:
            for item in node.items:
                classes = self._asserted(item.context_expr, context=True)
                if classes is not None and node.body:
                    found.append(self._region(node.body[0], node.body[-1], classes))
        elif kind is _DEF:
            for decorator in node.decorator_list:
                classes = self._expected_failure(decorator)
                if classes is not None:
                    found.append(self._region(node, node, classes))
        elif node.handlers and node.body:
            found.extend(self._try_expecting(node))
        return found

    def _may_assert(self, func: ast.AST) -> bool:
        """Whether ``_asserted`` may find a call of ``func`` asserting an error: an attribute
        named like one, or a name the file's imports bind to one (each name resolved once)."""
        kind = func.__class__
        if kind is ast.Attribute:
            return func.attr.startswith("assertRaises") or func.attr in _ASSERT_RAISES_LEAVES
        if kind is not ast.Name:
            return False
        known = self._asserting_names
        found = known.get(func.id)
        if found is None:
            found = known[func.id] = self.ctx.qualname(func) in _ASSERT_RAISES_FUNCTIONS
        return found

    def _try_expecting(self, node: ast.Try) -> list[Region]:
        """The hand-written form of ``assertRaises``: ``try: <body> except E: ...`` whose ``else``
        fails (``raise AssertionError(...)``, ``self.fail(...)``, ``pytest.fail(...)``), or whose
        body ends by failing. The body (before that last statement) expects E."""
        if node.orelse and _fails(node.orelse[-1], self.ctx):
            body = node.body
        elif len(node.body) > 1 and _fails(node.body[-1], self.ctx):
            body = node.body[:-1]
        else:
            return []
        classes = frozenset().union(
            *(self.classes(handler.type) if handler.type is not None else _ANY for handler in node.handlers)
        )
        return [self._region(body[0], body[-1], classes)] if classes else []

    def judge(self, position: tuple[int, int], raised: tuple[str, ...], trace_only: bool = False) -> str | None:
        """EXPECTED when the code at ``position`` (line, character column) runs where ``raised``
        is expected; INSIDE when it sits in a block that expects something else; else None."""
        if not self._may_expect:
            return None
        holding = self._holding(position)
        if any(covers(region.classes, raised) for region in holding):
            return EXPECTED
        function = self._innermost_function(position)
        if function is not None and raised and self._used_where_expected(function, raised, trace_only):
            return EXPECTED
        return INSIDE if holding else None

    def expects_at(self, node: ast.AST) -> bool:
        """Whether ``node`` runs in a block that expects some error (a test of a failure)."""
        if not self._may_expect:
            return False
        span = self.ctx.span(node)
        return bool(self._holding((span.start_line, span.start_column)))

    # Which calls assert an error ------------------------------------------------------

    def _asserted(self, call: ast.AST, context: bool) -> frozenset[str] | None:
        """The classes ``call`` asserts are raised: in a ``with`` item (``context``), or as the
        call form that runs a callable (``assertRaises(E, f, *args)``); None: it asserts none."""
        if not isinstance(call, ast.Call):
            return None
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr.startswith("assertRaises"):
            spelled = func.attr
        elif isinstance(func, ast.Attribute) and func.attr not in _ASSERT_RAISES_LEAVES:
            return None  # (its qualified name ends with its attribute: asked of every call)
        else:
            spelled = self.ctx.qualname(func)
            if spelled not in _ASSERT_RAISES_FUNCTIONS:
                return None
        # The error, and the pattern the message must match (assertRaisesRegex's second argument):
        # the call form's callable comes after them.
        specs = 1 if spelled in ("assertRaises", "pytest.raises", "numpy.testing.assert_raises") else 2
        if context == (len(call.args) > specs):
            return None
        expected = call.args[0] if call.args else next(
            (k.value for k in call.keywords if k.arg in ("expected_exception", "exception")), None
        )
        return self.classes(expected) if expected is not None else None

    def _expected_failure(self, decorator: ast.AST) -> frozenset[str] | None:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        qualified = self.ctx.qualname(target)
        if qualified in _EXPECTED_FAILURE:
            return _ANY
        if qualified not in _XFAIL:
            return None
        if isinstance(decorator, ast.Call):
            raises = next((k.value for k in decorator.keywords if k.arg == "raises"), None)
            if raises is not None:
                return self.classes(raises)
        return _ANY

    def classes(self, node: ast.AST) -> frozenset[str]:
        """The error classes ``node`` names (a class or a tuple of them), by qualified name."""
        kinds = node.elts if isinstance(node, ast.Tuple) else [node]
        names = set()
        for kind in kinds:
            qualified = self.ctx.qualname(kind)
            if qualified is None:
                if isinstance(kind, ast.Name) and not self.ctx.is_bound(kind.id):
                    names.add(kind.id)  # a builtin
                continue
            module, _, name = qualified.rpartition(".")
            if module.split(".", 1)[0] in _ERROR_MODULES:
                names.add(name)
        return frozenset(names)

    def _region(self, first: ast.AST, last: ast.AST, classes: frozenset[str]) -> Region:
        start, end = self.ctx.span(first), self.ctx.span(last)
        return Region((start.start_line, start.start_column), (end.end_line, end.end_column), classes)

    # Where a local function runs -------------------------------------------------------

    def _innermost_function(self, position: tuple[int, int]) -> ast.AST | None:
        holding = []
        for node in self._on_line(position[0]):
            if isinstance(node, _FUNCTIONS):
                span = self.ctx.span(node)
                if (span.start_line, span.start_column) <= position < (span.end_line, span.end_column):
                    holding.append(((span.start_line, span.start_column), node))
        return max(holding, key=lambda pair: pair[0])[1] if holding else None

    def _used_where_expected(self, function: ast.AST, raised: tuple[str, ...], trace_only: bool) -> bool:
        scope = self.ctx.enclosing_function(function)
        if scope is None:  # a module-level function may be used from anywhere
            return False
        name = self._bound_name(function)
        if name is None:
            return False
        eager_calls_work = (
            trace_only and isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) and not function.decorator_list
        )
        return self._uses_expected(scope, name, function, raised, eager_calls_work, depth=0)

    def _bound_name(self, function: ast.AST) -> str | None:
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return function.name
        node = function
        parent = self.ctx.parent(node)
        if isinstance(parent, ast.Call) and node in parent.args:  # f = jax.jit(lambda x: ...)
            node, parent = parent, self.ctx.parent(parent)
        if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
            return parent.targets[0].id
        return None

    def _uses_expected(
        self, scope: ast.AST, name: str, definition: ast.AST, raised, eager_calls_work: bool, depth: int
    ) -> bool:
        """Whether ``name``'s every use in ``scope`` (one at least) runs where ``raised`` is expected."""
        if depth > 3:
            return False
        counted = 0
        for use in _reads_outside(scope, name, definition):
            parent = self.ctx.parent(use)
            if eager_calls_work and isinstance(parent, ast.Call) and parent.func is use:
                continue  # runs the function eagerly, where the access works
            counted += 1
            span = self.ctx.span(use)
            if any(covers(r.classes, raised) for r in self._holding((span.start_line, span.start_column))):
                continue
            # g = jax.jit(f): where g is used
            assign = self.ctx.parent(parent) if isinstance(parent, ast.Call) and use in parent.args else None
            if (
                isinstance(assign, ast.Assign)
                and len(assign.targets) == 1
                and isinstance(assign.targets[0], ast.Name)
                and assign.targets[0].id != name
                and self._uses_expected(scope, assign.targets[0].id, None, raised, False, depth + 1)
            ):
                continue
            return False
        return counted > 0


def _reads_outside(scope: ast.AST, name: str, definition: ast.AST | None):
    """The reads of ``name`` in ``scope``, but not inside ``definition`` (its own body)."""
    for use in walk_values(scope):
        if (
            isinstance(use, ast.Name)
            and use.id == name
            and isinstance(use.ctx, ast.Load)
            and (definition is None or not _within(use, definition))
        ):
            yield use


def _within(node: ast.AST, outer: ast.AST) -> bool:
    return (outer.lineno, outer.col_offset) <= (node.lineno, node.col_offset) and (
        node.end_lineno,
        node.end_col_offset,
    ) <= (outer.end_lineno, outer.end_col_offset)


def _at_module_level(ctx: FileContext, function: ast.AST) -> bool:
    """Whether ``function`` is a statement of the module or of a class that is one: no function
    encloses it (the set of those statements made once per file)."""
    found = ctx.__dict__.get("_module_level_statements")
    if found is None:
        body = ctx.tree.body
        found = ctx.__dict__["_module_level_statements"] = {
            *body, *(member for s in body if s.__class__ is ast.ClassDef for member in s.body)
        }
    return function in found


# `with jax.disable_jit():` -- jit does not trace in it: a jitted function called there runs
# eagerly on concrete arrays, so its concrete-only accesses work. Only jit: vmap, pmap, grad
# and checkpoint still trace there (asked of the installed JAX by
# tests/test_traced_concrete_access.py::test_disable_jit_runs_only_jit_eagerly).
DISABLE_JIT = frozenset({"jax.disable_jit", "jax._src.api.disable_jit"})  # where every supported JAX defines it
EAGER_UNDER_DISABLE_JIT = api.public_names(library="jax", transform="jit")  # jax.jit, pjit


def runs_only_under_disable_jit(ctx: FileContext, function: ast.AST) -> bool:
    """Whether the local function ``function`` (jitted) runs only in `with jax.disable_jit():`
    blocks: each use of its name in the enclosing function is a call there, ``jax.jit(f)(x)``
    there, or ``g = jax.jit(f)`` whose every use is a call there. A module-level function may
    be called from anywhere, so it never does."""
    if "disable_jit" not in ctx.text or not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    if _at_module_level(ctx, function):
        return False  # (most jitted functions: asked without mapping the parents of the file's nodes)
    scope = ctx.enclosing_function(function)
    if scope is None:
        return False
    # Asked for each jitted function of the scope (a test method defines dozens): walked once.
    known = ctx.__dict__.setdefault("_disable_jit_blocks", {})
    blocks = known.get(scope)
    if blocks is None:
        blocks = known[scope] = [
            (node.body[0], node.body[-1])
            for node in walk_values(scope)
            if isinstance(node, (ast.With, ast.AsyncWith)) and node.body
            and any(isinstance(i.context_expr, ast.Call) and ctx.qualname(i.context_expr.func) in DISABLE_JIT
                    for i in node.items)
        ]
    if not blocks:
        return False

    def inside(node: ast.AST) -> bool:
        return any((first.lineno, first.col_offset) <= (node.lineno, node.col_offset)
                   and (node.end_lineno, node.end_col_offset) <= (last.end_lineno, last.end_col_offset)
                   for first, last in blocks)

    def every_use_called_inside(name: str, definition: ast.AST | None, depth: int) -> bool:
        counted = 0
        for use in _reads_outside(scope, name, definition):
            counted += 1
            parent = ctx.parent(use)
            if isinstance(parent, ast.Call) and parent.func is use and inside(parent):
                continue
            wraps = isinstance(parent, ast.Call) and use in parent.args and ctx.qualname(parent.func) in EAGER_UNDER_DISABLE_JIT
            if wraps:
                outer = ctx.parent(parent)
                if isinstance(outer, ast.Call) and outer.func is parent and inside(outer):
                    continue  # jax.jit(f)(x)
                if (isinstance(outer, ast.Assign) and len(outer.targets) == 1 and isinstance(outer.targets[0], ast.Name)
                        and depth < 2 and every_use_called_inside(outer.targets[0].id, None, depth + 1)):
                    continue  # g = jax.jit(f), g's calls
            return False
        return counted > 0

    return every_use_called_inside(function.name, function, 0)
