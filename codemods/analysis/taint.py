"""The taint of a traced function: which of its names and expressions hold tracers, and what a
helper of the file (or of another module of the project) returns when it is called with them.

The taint questions of ``tracing.Tracing``, split from it by question (issue 54): ``Taint`` is
the half of the file's tracing answer that judges values inside one traced function, the other
half (``Tracing``) finds which functions run under a transform. Use ``tracing_for(ctx)``; the
methods here are its. Also the tables the taint reads (what a tracer answers statically, which
JAX calls make or keep tracers) and the reading of which module-level names are bound once.
"""

from __future__ import annotations

import ast
import bisect
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from jax_codemod.analysis import api
from jax_codemod.analysis.classes import statements as own_statements
from jax_codemod.analysis.names import canonical, name_lines, spelled_as_parsed
from jax_codemod.analysis.transforms import CALLBACK_RESULTS, all_params

if TYPE_CHECKING:
    from jax_codemod.analysis.context import FileContext

# Attributes a tracer answers from its abstract value: reading them is fine in a trace.
STATIC_ATTRS = frozenset(
    {"shape", "dtype", "ndim", "size", "aval", "weak_type", "itemsize", "nbytes", "named_shape", "__class__"}
)
# Inside a trace, these jax functions return tracers...
ARRAY_MODULES = api.ARRAY_MODULES
# (creation functions return tracers even from no traced argument)
CREATION_FUNCTIONS = api.members(creates=True)
# ...except these, which answer from shapes and dtypes.
SHAPE_FUNCTIONS = api.members(static=True)
# Pytree helpers whose results are the leaves of their argument: tracers when it is traced.
TREE_LEAVES = frozenset(record.name for record in api.records(tree=True) if record.tree != "map")
KEEPS_TRACERS = api.KEEPS_TRACERS
# A block where JAX computes eagerly inside a trace: values not computed from the traced
# arguments are concrete there.
COMPILE_TIME_EVAL = frozenset({"jax.ensure_compile_time_eval", "jax.core.ensure_compile_time_eval"})
# How many helpers deep a return value is followed (`a(x)` returning `b(x) * 2`, ...).
RETURN_DEPTH = 4


@dataclass(frozen=True)
class Reported:
    """What a rule reports where it is made, so the taint never follows it as a tracer (the
    trace raises there): reading one of ``attributes``, or a call ``call(ctx, call)`` accepts."""

    attributes: frozenset[str] = frozenset()
    call: Callable[[FileContext, ast.Call], bool] | None = None


NOTHING_REPORTED = Reported()


def _lambda_name(node: ast.AST) -> str | None:
    """The name ``node`` binds to a lambda, where it is `name = lambda ...: ...`."""
    if (
        node.__class__ is ast.Assign
        and node.value.__class__ is ast.Lambda
        and len(node.targets) == 1
        and node.targets[0].__class__ is ast.Name
    ):
        return node.targets[0].id
    return None


def _bound_once_at_top(tree: ast.Module, text: str | None = None) -> set[str]:
    """The names one top-level statement of ``tree`` binds, and no other statement (nor a
    `global` declaration elsewhere). Given the module's ``text``, read from the statements
    (``_statement_bindings``), not walked into expressions (a whole-tree walk cost a tenth of
    JAX001's time on a large module); a text with a walrus is walked whole."""
    statements_only = text is not None and ":=" not in text
    globals_ = text is None or _global_statement_in(text)  # function bodies are read only for them
    counts: dict[str, int] = {}
    declared: set[str] = set()
    for statement in tree.body:
        bound: set[str] = set()
        if statements_only:
            _statement_bindings(statement, bound, declared if globals_ else None)
        else:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound.add(statement.name)
            elif isinstance(statement, (ast.Import, ast.ImportFrom)):
                bound.update(_import_names(statement))
            for node in ast.walk(statement):
                if node.__class__ is ast.Global:
                    declared.update(node.names)
                elif node.__class__ is ast.Name and isinstance(node.ctx, ast.Store) and not isinstance(
                    statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
                ):
                    bound.add(node.id)
        for name in bound:
            counts[name] = counts.get(name, 0) + 1
    return {name for name, count in counts.items() if count == 1 and name not in declared}


NAMES_BEFORE_EVERY = 3  # ``Taint._module_function``: names asked one at a time before all at once


def _bound_once_every(tree: ast.Module, text: str) -> set[str]:
    """Every name ``_bound_once`` holds bound once, from one reading of every top-level
    statement (its reading of the statements on a name's lines, for all of them)."""
    if not spelled_as_parsed(text):
        return _bound_once_at_top(tree, text)
    return _bound_once_in(tree.body, text)


def _bound_once_in(statements: list[ast.stmt], text: str) -> set[str]:
    """The names one of ``statements`` (top-level ones of the module whose text is ``text``)
    binds and no other, nor a `global` declaration in them."""
    counts: dict[str, int] = {}
    declared: set[str] = set()
    walrus, globals_ = ":=" in text, _global_statement_in(text)
    for statement in statements:
        bound: set[str] = set()
        _statement_bindings(statement, bound, declared if globals_ else None)
        if walrus and statement.__class__ not in _DEFINITIONS:
            # `(name := ...)` at module level, in this statement's expressions.
            bound.update(n.target.id for n in ast.walk(statement) if n.__class__ is ast.NamedExpr)
        for name in bound:
            counts[name] = counts.get(name, 0) + 1
    return {name for name, count in counts.items() if count == 1 and name not in declared}


def _bound_once(tree: ast.Module, text: str, name: str, starts: list[int] | None = None) -> bool:
    """``name in _bound_once_at_top(tree, text)``, reading only the top-level statements on the
    lines that spell ``name`` (a binding spells it); ``starts``: the first lines of the
    statements of ``tree.body``, for a caller that asks about several names."""
    if not spelled_as_parsed(text):  # (lines counted as the parser counts them)
        return name in _bound_once_at_top(tree, text)
    lines = name_lines(text, name)
    if not lines:
        return False
    body = tree.body
    if starts is None:
        starts = [statement.lineno for statement in body]
    # The statements that hold those lines: for each line, the last statement that starts at or
    # before it, and those before that end on it (`a = (1\n); b = 2`, `a = 1; b = 2`).
    holding: set[int] = set()
    for line in lines:
        index = bisect.bisect_right(starts, line) - 1
        while index >= 0 and body[index].end_lineno >= line:
            holding.add(index)
            index -= 1
    return name in _bound_once_in([body[index] for index in sorted(holding)], text)


_IMPORTS = (ast.Import, ast.ImportFrom)


def _import_names(statement: ast.Import | ast.ImportFrom) -> list[str]:
    """The names an import statement binds (`import a.b` binds `a`)."""
    return [alias.asname or alias.name.split(".")[0] for alias in statement.names]


@lru_cache(maxsize=8)  # asked for each name ``_bound_once`` is asked about, of the same few texts
def _global_statement_in(text: str) -> bool:
    """Whether a line of ``text`` may start with a `global` statement (`global_step` is none)."""
    at = text.find("global")
    while at != -1:
        after = text[at + 6 : at + 7]
        before = text[text.rfind("\n", 0, at) + 1 : at]
        if after in (" ", "\t", "\\") and (not before.strip(" \t") or ";" in before):
            return True
        at = text.find("global", at + 6)
    return False


_TARGETS = {ast.Assign: "targets", ast.AnnAssign: "target", ast.AugAssign: "target", ast.For: "target", ast.AsyncFor: "target"}
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _statement_bindings(statement: ast.stmt, bound: set[str], declared: set[str] | None, inside: bool = False) -> None:
    """Adds what ``statement`` binds at module level to ``bound`` (there is no walrus in it):
    the targets of assignments, loops, `with` and `except ... as`, imports, `def` and `class`
    names, a `match`'s captures, in the blocks of `if`, `try`, `for`, `while`, `with` too; and
    the names of `global` statements in function bodies to ``declared`` (``inside``: in one;
    None: the text holds no `global`)."""
    kind = statement.__class__
    if kind is ast.Global:
        if declared is not None:
            declared.update(statement.names)
        return
    if kind in _DEFINITIONS:
        if not inside:
            bound.add(statement.name)
        if declared is not None:
            for inner in statement.body:  # only a `global` in there concerns the module
                _statement_bindings(inner, set(), declared, True)
        return
    if inside:
        bound = set()  # a function's own names: only its `global`s are looked for
    if kind in (ast.Import, ast.ImportFrom):
        bound.update(_import_names(statement))
        return
    if kind.__name__ == "Match":
        bound.update(
            name for case in statement.cases for node in ast.walk(case.pattern)
            for name in (getattr(node, "name", None), getattr(node, "rest", None)) if isinstance(name, str)
        )
        for case in statement.cases:
            for inner in case.body:
                _statement_bindings(inner, bound, declared, inside)
        return
    field = _TARGETS.get(kind)
    if field is not None:
        targets = getattr(statement, field)
        for target in targets if isinstance(targets, list) else [targets]:
            bound.update(node.id for node in ast.walk(target) if node.__class__ is ast.Name)
    elif kind in (ast.With, ast.AsyncWith):
        for item in statement.items:
            if item.optional_vars is not None:
                bound.update(node.id for node in ast.walk(item.optional_vars) if node.__class__ is ast.Name)
    for name in ("body", "orelse", "finalbody"):
        for inner in getattr(statement, name, ()):
            _statement_bindings(inner, bound, declared, inside)
    for handler in getattr(statement, "handlers", ()):
        if handler.name:
            bound.add(handler.name)
        for inner in handler.body:
            _statement_bindings(inner, bound, declared, inside)


def param_root(expr: ast.AST) -> str | None:
    """The name an access chain (`x`, `x.buf`, `xs[0]`) starts from; None for anything else
    (a static attribute on the way, `x.shape[0]`, holds no tracer)."""
    while isinstance(expr, (ast.Attribute, ast.Subscript)):
        if isinstance(expr, ast.Attribute) and expr.attr in STATIC_ATTRS:
            return None
        expr = expr.value
    return expr.id if isinstance(expr, ast.Name) else None


def mentions(expr: ast.AST, names: set[str]) -> bool:
    return any(isinstance(node, ast.Name) and node.id in names for node in ast.walk(expr))


class Taint:
    """The taint questions of one file's tracing answer: the base class of ``Tracing``, whose
    ``__init__`` sets up the state read here (``ctx``, the memo tables ``_tainted``, ``_returns``,
    ``_returning``, ``_cuts``, ``_height`` and ``_defined``) and which answers what the taint asks
    of the functions it judges (``scope_nodes``, ``stored_names``, ``_dispatched``,
    ``_called_params``, ``analysis``)."""

    def tainted_names(self, function, traced: frozenset[str], reported: Reported = NOTHING_REPORTED):
        """Parameters that are tracers (``traced``) and the locals computed from them or from jax
        calls (a fresh set; computed once per function, traced set and ``reported``)."""
        key = (function, traced, reported)
        found = self._tainted.get(key)
        if found is None:
            found = self._tainted[key] = self.taint(function, traced, reported=reported)
        return set(found)

    def taint(self, function, traced: frozenset[str], eager=(), reported: Reported = NOTHING_REPORTED):
        """The traced names; in ``eager`` lines (``compile_time_eval_lines``) a value is a tracer
        only when it is computed from one: `jnp.arange(3)` is a concrete array there."""
        tainted = set(traced)
        bindings = []
        for node in self.scope_nodes(function):
            if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                bindings.append((targets, node.value))
            elif isinstance(node, (ast.For, ast.comprehension)):
                bindings.append(([node.target], node.iter))
            elif isinstance(node, ast.withitem) and node.optional_vars is not None:
                bindings.append(([node.optional_vars], node.context_expr))
            elif isinstance(node, ast.NamedExpr):
                bindings.append(([node.target], node.value))
        # To a fixed point; a binding whose value was a tracer has tainted its targets for good
        # (the set only grows), so each pass asks only of the others.
        changed = True
        while changed and bindings:
            changed = False
            waiting = []
            for targets, value in bindings:
                in_eager = any(start <= value.lineno <= end for start, end in eager)
                if not (mentions(value, tainted) if in_eager else self.is_traced(value, tainted, reported)):
                    waiting.append((targets, value))
                    continue
                for target in targets:
                    for name in ast.walk(target):
                        if isinstance(name, ast.Name) and name.id not in tainted:
                            tainted.add(name.id)
                            changed = True
            bindings = waiting
        return tainted

    def is_traced(self, expr: ast.AST, tainted: set[str], reported: Reported = NOTHING_REPORTED) -> bool:
        """Whether ``expr`` certainly is a tracer, given the ``tainted`` names; unknown calls count
        as concrete (precision first)."""
        if isinstance(expr, ast.Name):
            return expr.id in tainted
        if isinstance(expr, ast.Attribute):
            # What a rule reports where it is read is concrete after it.
            if expr.attr in STATIC_ATTRS or expr.attr in reported.attributes:
                return False
            return self.is_traced(expr.value, tainted, reported)
        if isinstance(expr, (ast.Subscript, ast.Starred)):
            return self.is_traced(expr.value, tainted, reported)
        if isinstance(expr, ast.BinOp):
            is_traced = self.is_traced
            return is_traced(expr.left, tainted, reported) or is_traced(expr.right, tainted, reported)
        if isinstance(expr, ast.UnaryOp):
            return self.is_traced(expr.operand, tainted, reported)
        if isinstance(expr, ast.IfExp):
            is_traced = self.is_traced
            return is_traced(expr.body, tainted, reported) or is_traced(expr.orelse, tainted, reported)
        if isinstance(expr, (ast.Tuple, ast.List)):
            return any(self.is_traced(element, tainted, reported) for element in expr.elts)
        if isinstance(expr, ast.Dict):
            # `stats = {"mean": x.mean()}`: its values, as `stats.items()` and `stats["mean"]` read.
            return any(self.is_traced(value, tainted, reported) for value in expr.values)
        if isinstance(expr, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
            # Comprehension targets are in the function's taint (``taint``'s bindings).
            return self.is_traced(expr.elt, tainted, reported)
        if isinstance(expr, ast.DictComp):
            return self.is_traced(expr.value, tainted, reported)
        if isinstance(expr, ast.Call):
            return self._call_is_traced(expr, tainted, reported)
        return False

    def _call_is_traced(self, call: ast.Call, tainted: set[str], reported: Reported) -> bool:
        if reported.call is not None and reported.call(self.ctx, call):
            return False  # reported where it is called; its value is concrete
        qualified = self.ctx.qualname(call.func)
        if qualified is None:
            # A method of a tracer (`x.reshape(-1)`) returns a tracer.
            if isinstance(call.func, ast.Attribute) and self.is_traced(call.func.value, tainted, reported):
                return True
            # A helper of this file (`y = normalize(x)`) returns one when its own taint says so.
            return self._helper_returns_traced(call, tainted, reported)
        public = canonical(qualified)
        if public in TREE_LEAVES or public in KEEPS_TRACERS:
            return bool(call.args) and self.is_traced(call.args[0], tainted, reported)
        if public in CALLBACK_RESULTS:
            return True  # `jax.pure_callback(f, shape, x)`: the result comes back into the trace
        if not qualified.startswith(ARRAY_MODULES):
            # A function of another module of the project (`from pkg.ops import normalize`).
            return self._project_returns_traced(call, qualified, tainted, reported)
        function = qualified.rsplit(".", 1)[1]
        if function in SHAPE_FUNCTIONS:
            return False
        if function in CREATION_FUNCTIONS:
            return True
        arguments = [*call.args, *(k.value for k in call.keywords)]
        return any(self.is_traced(argument, tainted, reported) for argument in arguments)

    # Helpers' return values ----------------------------------------------------------------

    def _helper_returns_traced(self, call: ast.Call, tainted: set[str], reported: Reported) -> bool:
        """Whether ``call`` runs a function of this file (a module-level `def` or lambda, or a
        method through `self`/`super()`) that returns a tracer, given which of its parameters
        the call passes tracers to. Without this a tracer handed back by a helper
        (`y = normalize(x)`) was concrete to the caller's taint, and a helper it then went to
        (`to_host(y)`, here or in another module) was never followed: a silent miss."""
        if not self._may_run_own_function(call.func) or not self._passes_tracer(call, tainted, reported):
            return False  # most calls: of no function of this file, or no tracer goes in
        callees = self._returning_callees(call)
        if not callees:
            # A partial reading stubs the blocks it cut (`class normalize: pass`): there, a call
            # of a module-level name or of a method through `self` with tracers may return one
            # (the reading proves a file clean only if it is clean on that assumption too).
            return self.ctx.partial and self._may_be_stubbed(call.func)
        # Every function the call may run must return one (a `self` call may reach overrides).
        return all(
            self._returns_traced(function, self._called_params(function, call.args, call.keywords, tainted, reported, bound), reported)
            for function, bound in callees
        )

    def _passes_tracer(self, call: ast.Call, tainted: set[str], reported: Reported) -> bool:
        """Whether one of ``call``'s arguments is a tracer."""
        return any(self.is_traced(a, tainted, reported) for a in [*call.args, *(k.value for k in call.keywords)])

    def _project_returns_traced(self, call: ast.Call, qualified: str, tainted: set[str], reported: Reported) -> bool:
        """``_helper_returns_traced`` for a function of another module of the project
        (`to_host(ops.normalize(x))`): its own module's taint judges its returns. A partial
        reading does not read other modules: there such a call with tracers may return one."""
        project = self.ctx.project
        if project is None or project.module_of(qualified) is None:
            return False
        if not self._passes_tracer(call, tainted, reported):
            return False
        if self.ctx.partial:
            return True
        if len(self._returning) >= RETURN_DEPTH:
            return False
        callee = self.analysis.callee(call)
        if (
            callee is None
            or callee.analysis is self.analysis
            or callee.function.__class__ is not ast.FunctionDef
            or callee.function.decorator_list
        ):
            return False
        params = self._called_params(callee.function, list(callee.args), callee.keywords, tainted, reported, callee.bound)
        return callee.analysis.tracing._returns_traced(callee.function, params, reported)

    def _may_be_stubbed(self, func: ast.expr) -> bool:
        """Whether ``func`` names a module-level class or `name = ...` binding of a partial tree
        (a stub's forms), or a method through `self`/`super()`."""
        if func.__class__ is ast.Attribute:
            owner = func.value
            return (owner.__class__ is ast.Name and owner.id == "self") or (
                owner.__class__ is ast.Call and owner.func.__class__ is ast.Name and owner.func.id == "super"
            )
        if func.__class__ is not ast.Name:
            return False
        names = self.__dict__.get("_stub_names")
        if names is None:
            # (Once per tree: asked of every call of a name in a partial tree's traced functions.)
            names = self.__dict__["_stub_names"] = frozenset(
                name
                for statement in self.ctx.tree.body
                for name in (
                    (statement.name,) if statement.__class__ is ast.ClassDef
                    else (t.id for t in statement.targets if t.__class__ is ast.Name) if statement.__class__ is ast.Assign
                    else ()
                )
            )
        return func.id in names

    def _returning_callees(self, call: ast.Call) -> list[tuple[ast.AST, bool]]:
        """(function, bound) for what ``call`` surely runs among the file's own functions: a
        module-level, undecorated `def` (or lambda) bound once, not shadowed where the call is;
        methods the call dispatches to through `self` (``_dispatched``), undecorated."""
        func = call.func
        if func.__class__ is ast.Name:
            function = self._module_function(func.id)
            if function is None:
                return []
            scope = self.ctx.enclosing_function(call)
            while scope is not None:  # a parameter or local of the same name is not the helper
                if self._binds(scope, func.id):
                    return []
                scope = self.ctx.enclosing_function(scope)
            return [(function, False)]
        if func.__class__ is ast.Attribute:
            scope = self.ctx.enclosing_function(call)
            if scope is None or scope.__class__ is ast.Lambda:
                return []
            methods = self._dispatched(scope, func)
            if any(m.__class__ is not ast.FunctionDef or m.decorator_list for m in methods):
                return []  # a staticmethod, property or wrapper: what it returns is not its body's
            return [(method, True) for method in methods]
        return []

    def _binds(self, scope, name: str) -> bool:
        """Whether ``scope`` binds ``name`` itself: a parameter, an assignment, a nested `def`
        or class, an import."""
        if name in self.stored_names(scope) or any(a.arg == name for a in all_params(scope)):
            return True
        defined = self._defined.get(scope)
        if defined is None:
            # (Once per scope: asked for every call of a helper's name in it.) Definitions and
            # imports are statements: the scope's own, not its expressions, are walked.
            found: set[str] = set()
            for node in own_statements(scope.body) if scope.body.__class__ is list else ():
                if node.__class__ in _DEFINITIONS:
                    found.add(node.name)
                elif node.__class__ in _IMPORTS:
                    found.update(_import_names(node))
            defined = self._defined[scope] = frozenset(found)
        return name in defined

    def _may_run_own_function(self, func: ast.expr) -> bool:
        """From its form alone, whether calling ``func`` may run a function of this file that
        ``_helper_returns_traced`` follows (``_returning_callees``), or a stub of one: a name
        of a module-level `def` or lambda, a partial tree's stub, or a method called on a name
        or on `super()`. Asked before the arguments are judged: most calls are of none."""
        if func.__class__ is ast.Name:
            return func.id in self._module_defs() or (self.ctx.partial and self._may_be_stubbed(func))
        if func.__class__ is ast.Attribute:
            receiver = func.value
            return receiver.__class__ is ast.Name or (receiver.__class__ is ast.Call and getattr(receiver.func, "id", None) == "super")
        return False

    def _module_defs(self) -> dict[str, list[ast.AST]]:
        """The module-level undecorated `def`s and lambdas (`f = lambda x: ...`), by name."""
        candidates = self.__dict__.get("_module_def_table")
        if candidates is None:
            candidates = self.__dict__["_module_def_table"] = {}
            for statement in self.ctx.tree.body:
                if statement.__class__ is ast.FunctionDef and not statement.decorator_list:
                    candidates.setdefault(statement.name, []).append(statement)
                elif (bound := _lambda_name(statement)) is not None:
                    candidates.setdefault(bound, []).append(statement.value)
        return candidates

    def _module_function(self, name: str) -> ast.AST | None:
        """The module-level undecorated `def` or lambda (`f = lambda x: ...`) ``name`` is, where
        it is the only binding of that name at the top level (a decorator may return anything);
        else None. Asked of the few names called with tracers, one at a time."""
        found = self._module_defs().get(name)
        if found is None or len(found) != 1:
            return None
        once = self.__dict__.setdefault("_bound_once", {})
        if name not in once:
            # A name's lines are found by a scan of the text: past a few names, one reading of
            # every top-level statement answers for all (a large module asks many).
            every = self.__dict__.get("_bound_once_every")
            if every is None and len(once) >= NAMES_BEFORE_EVERY:
                every = self.__dict__["_bound_once_every"] = _bound_once_every(self.ctx.tree, self.ctx.text)
            if every is not None:
                once[name] = name in every
            else:
                starts = self.__dict__.get("_body_starts")
                if starts is None:
                    starts = self.__dict__["_body_starts"] = [statement.lineno for statement in self.ctx.tree.body]
                once[name] = _bound_once(self.ctx.tree, self.ctx.text, name, starts)
        return found[0] if once[name] else None

    def _returns_traced(self, function, params: frozenset[str], reported: Reported) -> bool:
        """Whether ``function`` returns a tracer when ``params`` are: its taint with them traced,
        its `return` expressions judged by ``is_traced`` (`return x.shape[0]`, `len(x)`, a
        constant or a value from other parameters are not). Memoized per (function, params).
        A function already being judged (recursion), or one more than ``RETURN_DEPTH`` helpers
        deep, answers "not traced" (precision first). The answer must not depend on which
        question came first: what was judged below a cut is not memoized, and a memoized answer
        that needed more helpers below it than are left here counts as a cut."""
        if not params:
            return False
        key = (function, params, reported)
        stack = self._returning
        known = self._returns.get(key)
        if known is not None and len(stack) + known[1] <= RETURN_DEPTH:
            self._height = max(self._height, known[1])
            return known[0]
        if key in stack or len(stack) >= RETURN_DEPTH or known is not None:
            self._cuts.add(key if key in stack else None)
            return False
        outer = self._cuts, self._height
        self._cuts, self._height = set(), 0
        stack.append(key)
        try:
            tainted = self._tainted.get(key)
            fresh = tainted is None
            if fresh:
                tainted = self.taint(function, params, reported=reported)
            traced = any(self.is_traced(value, tainted, reported) for value in self._returned_values(function))
        finally:
            stack.pop()
            cuts, height = self._cuts - {key}, self._height + 1
            self._cuts, self._height = outer[0] | cuts, max(outer[1], height)
        if not cuts:  # a cut of its own recursion alone is the same wherever it is asked
            self._returns[key] = (traced, height)
            if fresh:
                self._tainted[key] = tainted
        return traced

    def _returned_values(self, function) -> list[ast.expr]:
        if function.__class__ is ast.Lambda:
            return [function.body]
        nodes = self.scope_nodes(function)
        if any(node.__class__ in (ast.Yield, ast.YieldFrom) for node in nodes):
            return []  # a generator function returns a generator
        return [node.value for node in nodes if node.__class__ is ast.Return and node.value is not None]

    def compile_time_eval_lines(self, function) -> list[tuple[int, int]]:
        """The lines of ``function``'s `with jax.ensure_compile_time_eval():` blocks, where what
        is not computed from a traced argument is a concrete array."""
        ctx = self.ctx
        if "compile_time_eval" not in ctx.text:
            return []
        return [
            (node.body[0].lineno, node.body[-1].end_lineno)
            for node in self.scope_nodes(function)
            if isinstance(node, (ast.With, ast.AsyncWith))
            and any(
                isinstance(item.context_expr, ast.Call)
                and canonical(ctx.qualname(item.context_expr.func)) in COMPILE_TIME_EVAL
                for item in node.items
            )
        ]

    def comprehension_aliases(self, function, params: set[str]) -> dict[str, str]:
        """Loop variables that run over a traced argument's elements or pytree leaves
        (`for leaf in jax.tree.leaves(params)`) -> that argument."""
        aliases = {}
        for node in self.scope_nodes(function):
            if isinstance(node, (ast.comprehension, ast.For)) and isinstance(node.target, ast.Name):
                root = param_root(self.leaves_of(node.iter))
                if root in params:
                    aliases[node.target.id] = root
        return aliases

    def leaves_of(self, expr: ast.AST) -> ast.AST:
        """`jax.tree.leaves(p)`, `jax.tree.flatten(p)[0]` -> `p`: the leaves of a traced pytree
        are tracers; anything else: ``expr``."""
        if isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Call):
            expr = expr.value
        if isinstance(expr, ast.Call) and expr.args and canonical(self.ctx.qualname(expr.func)) in TREE_LEAVES:
            return expr.args[0]
        return expr
