"""Which functions of a file run under a JAX transform, which of their parameters are tracers,
and whether an expression holds a tracer: the one tracing answer rules and the value analysis
ask.

``tracing_for(ctx)`` (also ``ctx.analysis.tracing``) returns the file's ``Tracing``, built once
per ``FileContext`` and kept with it; every answer is memoized in it (never on the tree's
nodes), and the value analysis is built only when a question needs it. The API:

- ``traced_functions(region=None, ...) -> list[Traced]``: every function that runs on tracers,
  however the file spells its transform: a decorator (``jax.jit`` and its aliases,
  ``functools.partial(jax.jit, ...)``, ``@jax.jit(...)``, decorator factories, equinox's and
  flax's, with ``jax.named_call``/``named_scope`` beside them), a call (``jax.jit(f)``,
  ``jax.jit(self._step)``, ``jax.jit(partial(loss, model=m))``, nested transforms, ``lax``
  control-flow bodies and ``lax.switch`` branch lists, jitted dicts and comprehensions), a
  lambda passed to one, and the helpers of the file called from inside a trace with tracer
  arguments (a few levels deep; a function ``jax.tree.map`` applies to a traced tree too; a
  method called through `self` or `super()`, with the overrides of the file's subclasses that
  inherit the calling method: ``analysis.classes``).
  ``Traced.traced`` names the traced parameters (static, unmapped and undifferentiated ones
  are not), ``Traced.transforms`` every transform that traces it. ``region``: a ``Region``
  of the tree, to look only at the nodes around some lines (a rule's candidate lines).
- ``function_transforms(def) -> list[Transform]``: the transforms the value analysis
  sees a ``def`` or lambda run under (its decorators and the calls that pass it to one, as
  values resolves them, then the spelled decorators); ``traced_parameter(arg, def)``: whether
  every one of them traces that parameter. ``values.Analysis`` asks these (a ``TRACER``
  parameter is one of them).
- ``tainted_names(function, traced) -> set[str]``: the traced parameters and the locals
  computed from them or from JAX calls that make arrays; ``is_traced(expr, tainted)``:
  whether ``expr`` certainly holds a tracer by that local taint (unknown calls count as
  concrete); ``is_tracer(expr)``: the whole-file value analysis' answer (containers,
  ``self`` attributes, records, helpers' return values, closures over a trace).
- ``compile_time_eval_lines(function)``: the lines of its ``with jax.ensure_compile_time_eval():``
  blocks (there, only what is computed from a traced argument is a tracer);
  ``comprehension_aliases(function, params)``: loop variables over a traced argument's leaves.

A rule that reports a value where it is made (a concrete-only API called on a tracer) passes
``Reported``: the taint does not follow what the rule reports, as it would raise in the trace.

Two readings of "runs under a transform" still live side by side here, both resolving names
through the one resolver (``analysis.names.canonical``): ``traced_functions`` sweeps a region
for the file's spelled transforms (``Spellings``), ``function_transforms`` asks the value
analysis, one function at a time. Measured on jax's own sources before the resolver was one,
963 parameters agreed; 443 only ``traced_functions`` called traced (helpers, ``lax`` bodies
past the first argument, methods); 38 only ``function_transforms`` (33 of them
``from jax._src import lax`` spellings, which both readings now map; 9 ``@overload`` stubs).
Making ``values`` ask the finder would call those helpers' parameters tracers there too, a
change of findings to decide case by case (tests/test_tracing.py pins both sides today).
"""

from __future__ import annotations

import ast
import bisect
import re
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING

from jax_codemod.analysis import api
from jax_codemod.analysis.classes import classes_for
from jax_codemod.analysis.names import canonical
from jax_codemod.analysis.scopes import CHILD_FIELDS, child_fields, walk_values

# The taint questions and their tables, split out by question (issue 54); the names are this
# module's too, where the rules and the tests read them.
from jax_codemod.analysis.taint import (
    NOTHING_REPORTED,
    Reported,
    Taint,
    _bound_once_at_top,
    _lambda_name,
)
from jax_codemod.analysis.transforms import (
    JIT_LIKE,
    PARTIAL,
    Spellings,
    Transform,
    all_params,
    positional_params,
    spellings_of,
    traced_parameters,
)

if TYPE_CHECKING:
    from jax_codemod.analysis.context import FileContext

# Pytree maps: their function runs on the leaves of the trees (canonical spellings).
TREE_MAPS = api.TREE_MAPS
APPLIERS = api.APPLIERS

# Why a traced function does not simply run under the one transform that names it
# (``Traced.obstacle``'s first item): a rule that rewrites around the transform reads it.
# `jax.config` as code reads a flag from it (`config.sharding_in_types.value`).
CONFIG_MODULES = frozenset({"jax.config", "jax._src.config", "jax._src.config.config"})
OTHER_DECORATORS = "other-decorators"  # decorators beside the transform that are not transparent
ASYNC = "async"
BY_CALL = "by-call"  # transformed by a call: the plain function may also run eagerly
TRACED_TWICE = "traced-twice"
CALLED_IN_TRACE = "called-in-trace"  # called from inside another trace (second item: its name)

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_SCOPE_CLASSES = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef})
_COMPOUND = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.With, ast.AsyncWith, ast.Match)
# Nodes with nothing below them that no reader of a region asks about (its readers look
# for functions and calls, and for the parents of those): kept out of it.
_LEAVES = frozenset({ast.Name, ast.Constant})
# The nodes of a region the traced-function search looks at (``Region.swept``).
_SWEPT = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.Call})


@dataclass
class Traced:
    """One function whose parameters are tracers, and how it came to be traced."""

    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
    transform: str  # the transform that names it (a jit-like one gives way to any other)
    traced: frozenset[str]
    donated: frozenset[str] = frozenset()
    # (code, name): why it does not run under ``transform`` alone, or None (codes above).
    obstacle: tuple[str, str] | None = None
    spelled: Transform | None = None  # how the file applies the transform
    # A helper called from inside a trace (the caller's name): only its statements before the
    # first compound one surely run on the tracer.
    caller: str | None = None
    # Every transform that traces it.
    transforms: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.transforms.add(self.transform)

    @property
    def unsplittable(self) -> tuple[str, str] | None:
        """``obstacle``, by the name JAX001's partial-reading tests compare."""
        return self.obstacle


def tracing_for(ctx) -> Tracing:
    """The file's one ``Tracing``, however many rules and analyses ask (kept on the context,
    which the engine clears when the file is done)."""
    found = ctx.__dict__.get("_tracing")
    if found is None:
        found = ctx.__dict__["_tracing"] = Tracing(ctx)
    return found


class Region:
    """The nodes whose line range covers one of ``lines``, with their parents (names and
    constants left out); ``lines=None``: every node of the tree."""

    def __init__(self, tree: ast.Module, lines: list[int] | None) -> None:
        self.tree = tree
        self.parents: dict[ast.AST, ast.AST] = {}
        self.nodes: list[ast.AST] = []
        self._scopes: dict[ast.AST, ast.AST | None] = {}
        self._indexes: tuple[dict, dict] | None = None
        self._grouped: dict[int, tuple[list, dict]] = {}
        if lines is None:  # every node: no line to look up
            _take_subtree(tree, self.parents, self.nodes)
        else:
            self._walk_lines(tree, lines)

    def _walk_lines(self, tree: ast.Module, lines: list[int]) -> None:
        """The nodes of the region, depth first (children pushed in field order, popped last
        first): a node's whole subtree comes before its next sibling, so an expression of one
        line, whose every part is in (it is in the region: it holds one of the lines), is taken
        whole by ``_take_subtree`` in the very order this walk would give (most nodes)."""
        parents, nodes = self.parents, self.nodes
        bisect_left, count = bisect.bisect_left, len(lines)
        leaves, node_class, fields_of = _LEAVES, ast.AST, CHILD_FIELDS.get
        stack: list[ast.AST] = [tree]
        while stack:
            node = stack.pop()
            start = getattr(node, "lineno", None)
            if start is not None and start == node.end_lineno and not getattr(node, "decorator_list", None):
                # One line, one of the lines: all of it is in (but a decorator, above its def).
                _take_subtree(node, parents, nodes)
                continue
            nodes.append(node)
            # scopes.children, inlined: contexts and operators (shared, never interesting) are
            # no children here; `pass`, `break` and `continue` are (no reader of the region
            # looks for them).
            fields = fields_of(node.__class__)
            for name in child_fields(node.__class__) if fields is None else fields:
                value = getattr(node, name, None)
                for child in value if value.__class__ is list else (value,):
                    if child.__class__ in leaves or not isinstance(child, node_class):
                        continue
                    start = getattr(child, "lineno", None)
                    if start is not None:
                        # A candidate line within the child's lines.
                        index = bisect_left(lines, start)
                        if index == count or lines[index] > child.end_lineno:
                            continue
                    parents[child] = node
                    stack.append(child)

    def scope_of(self, node: ast.AST) -> ast.AST | None:
        """The function (or None: the module) whose body holds ``node``."""
        # Asked again and again for the same definitions (a call's name is resolved against
        # every function of that name): the parents never change.
        scopes = self._scopes
        if node in scopes:
            return scopes[node]
        current = self.parents.get(node)
        while current is not None and not isinstance(current, _FUNCTIONS):
            current = self.parents.get(current)
        scopes[node] = current
        return current

    @cached_property
    def swept(self) -> list[ast.AST]:
        """The region's functions and calls, in its order: what the traced-function search and
        the function index look at (a tenth of its nodes; each looked at every node)."""
        kinds = _SWEPT
        return [node for node in self.nodes if node.__class__ in kinds]

    def defined_in(self, definitions: list[ast.AST], scope: ast.AST | None) -> list[ast.AST]:
        """The functions of ``definitions`` (one name's, from an index of the region) whose
        scope is ``scope``, in their order. Grouped once per list: every call that passes a
        name asks of all its definitions (a test module's hundreds of `def f` and as many
        `jax.jit(f)`: quadratic, asked one by one)."""
        return self.scopes_defining(definitions).get(scope, [])

    def scopes_defining(self, definitions: list[ast.AST]) -> dict[ast.AST | None, list[ast.AST]]:
        """``defined_in``'s groups: the functions of ``definitions`` by their scope."""
        kept = self._grouped.get(id(definitions))
        if kept is None:
            grouped: dict[ast.AST | None, list[ast.AST]] = {}
            for node in definitions:
                grouped.setdefault(self.scope_of(node), []).append(node)
            # (The list is kept with its groups: its id is never another's while it is.)
            kept = self._grouped[id(definitions)] = (definitions, grouped)
        return kept[1]

    def defined_outside(self, grouped: dict[ast.AST | None, list[ast.AST]], scope: ast.AST) -> bool:
        """Whether a scope around ``scope`` (the module included) is one of ``grouped``'s."""
        outer = self.scope_of(scope)
        while outer is not None:
            if outer in grouped:
                return True
            outer = self.scope_of(outer)
        return None in grouped

    def functions(self, decorated: bool = False) -> dict[str, list[ast.FunctionDef]]:
        """Functions of the region by name, undecorated ones unless ``decorated`` (methods are
        found through their class)."""
        # Both indexes in one pass over the region, once: the traced-function search asks for
        # the first, the helper search for the second.
        if self._indexes is None:
            plain: dict[str, list[ast.FunctionDef]] = {}
            every: dict[str, list[ast.FunctionDef]] = {}
            parents = self.parents
            named: dict[str, list[ast.AST]] = {}  # module-level names bound to a lambda
            wrapped: list[ast.FunctionDef] = []  # decorated functions
            for node in self.swept:
                if node.__class__ is ast.FunctionDef and not isinstance(parents.get(node), ast.ClassDef):
                    every.setdefault(node.name, []).append(node)
                    if not node.decorator_list:
                        plain.setdefault(node.name, []).append(node)
                    else:
                        wrapped.append(node)
            # (In the region's order: its walk pops the module's statements last first.)
            for node in reversed(self.tree.body):
                if node.__class__ is ast.Assign and node in parents and (bound := _lambda_name(node)) is not None:
                    named.setdefault(bound, []).append(node.value)
            # `@logged @timed def step(x)`, each a `functools.wraps` wrapper that calls the
            # function with all its arguments (or a registry's decorator that returns it): a
            # transform of `step` traces the function as written (issue 54).
            if wrapped:
                # A partial reading's stub of a def (`class logged: pass`) may be such a wrapper:
                # taken for one, so that a reading never proves clean what the whole file is not.
                stubs = {
                    n.name for n in self.tree.body
                    if n.__class__ is ast.ClassDef and not n.bases and not n.decorator_list
                    and len(n.body) == 1 and n.body[0].__class__ is ast.Pass
                }
                for node in wrapped:
                    if all(
                        decorator.__class__ is ast.Name and decorator.id in stubs or _passes_through(every, decorator)
                        for decorator in node.decorator_list
                    ):
                        plain.setdefault(node.name, []).append(node)
            # `to_host = lambda x: np.asarray(x)`: a helper like a `def`, where that is the
            # name's only module-level binding (a name also bound by a `def` is left to it).
            if named:
                once = _bound_once_at_top(self.tree)
                for name, lambdas in named.items():
                    if len(lambdas) == 1 and name not in every and name in once:
                        every[name] = plain[name] = lambdas
            self._indexes = (plain, every)
        return self._indexes[1] if decorated else self._indexes[0]


def first_compound_line(function) -> int | None:
    """The line of ``function``'s first compound statement (`if`, `for`, `try`, ...), if any: in
    a helper, only what comes before it surely runs on the tracer (`if validate is True:` is
    never true of a traced flag; `if isinstance(x, core.Tracer): return x` guards the rest)."""
    body = function.body if isinstance(function.body, list) else []
    return next((s.lineno for s in body if isinstance(s, _COMPOUND)), None)


def name_of(function) -> str:
    return getattr(function, "name", "<lambda>")


class Tracing(Taint):
    """The tracing answer of one file. Use ``tracing_for(ctx)``; never build one per rule."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self._nodes: dict[ast.AST, list[ast.AST]] = {}
        self._stored: dict[ast.AST, set[str]] = {}
        self._defined: dict[ast.AST, frozenset[str]] = {}  # ``_binds``'s: what a scope's defs, classes and imports bind
        self._tainted: dict[tuple[ast.AST, frozenset[str], Reported], set[str]] = {}
        # ``_returns_traced``: answers with the helpers below them, the functions being judged,
        # what its guard answered "not traced", the helpers below the one being judged.
        self._returns: dict[tuple, tuple[bool, int]] = {}
        self._returning: list[tuple] = []
        self._cuts: set = set()
        self._height = 0

    @property
    def analysis(self):
        """The file's value analysis (``values.Analysis``), which ``function_transforms`` and
        ``is_tracer`` read (built on first use: JAX001's questions mostly need none)."""
        return self.ctx.analysis

    @property
    def spellings(self) -> Spellings:
        """How the file spells transforms (``analysis.transforms``): aliases, equinox and flax
        ones, factories that take the function (``def jit(fn=None, **kw)``)."""
        return spellings_of(self.ctx)

    @cached_property
    def whole_region(self) -> Region:
        """The region of every node of the file, built once: each module another module's
        trace reaches is asked again for every seed (its caches are the parents' and scopes')."""
        return Region(self.ctx.tree, None)

    # Traced functions ----------------------------------------------------------------

    def traced_functions(
        self,
        region: Region | None = None,
        spellings: Spellings | None = None,
        reported: Reported = NOTHING_REPORTED,
    ) -> list[Traced]:
        """Every function of ``region`` (None: of the file) that runs on tracers; see the module
        docstring. ``reported``: what the caller's rule reports (the helpers' taint skips it)."""
        if region is None and spellings is None:
            # The whole file's answer is asked again by every module whose classes derive from
            # one here (``_add_inherited``): computed once.
            memo = self.__dict__.setdefault("_whole_traced", {})
            if reported not in memo:
                memo[reported] = []  # a cycle of bases through modules finds nothing more
                memo[reported] = self._traced_functions(self.whole_region, self.spellings, reported)
            return list(memo[reported])
        return self._traced_functions(region or self.whole_region, spellings or self.spellings, reported)

    def _traced_functions(self, region: Region, spellings: Spellings, reported: Reported) -> list[Traced]:
        found: dict[ast.AST, Traced] = {}
        index: dict[str, list[ast.FunctionDef]] | None = None
        for node in region.swept:
            if node.__class__ is not ast.Call:
                if node.decorator_list:
                    self._add_decorated(found, node, spellings)
            else:
                hit = spellings.applied(node)
                if hit is None:
                    continue
                if index is None:
                    index = region.functions()
                self._add_called(found, region, index, spellings, node, hit)
        if self.ctx.project is not None:
            self._add_inherited(found, region, reported)
        helpers = region.functions(decorated=True)
        if helpers:
            helpers = _LeadingIndex(helpers, self, region)
        self._add_helpers(region, helpers, spellings, found, reported)
        return [traced for traced in found.values() if traced.traced]

    def reached_from(self, seed: Traced, reported: Reported = NOTHING_REPORTED) -> list[Traced]:
        """``seed`` (a function of this file that another module's trace calls with tracers)
        and the functions of this file it runs in that trace, as ``traced_functions`` finds
        helpers."""
        region = self.whole_region
        found = {seed.node: seed}
        helpers = region.functions(decorated=True)
        if helpers:
            helpers = _LeadingIndex(helpers, self, region)
        self._add_helpers(region, helpers, self.spellings, found, reported)
        return [traced for traced in found.values() if traced.traced]

    def _add_inherited(self, found: dict, region: Region, reported: Reported) -> None:
        """Methods of this file's classes that a traced method of another module's base class
        runs through `self` (``Base.step`` jitted there calls ``self.on_batch(x)``, which a
        class here overrides): traced, as ``_helpers_of`` finds the same within one file."""
        tree = self.ctx.tree
        classes = None
        imported = self.ctx._bindings
        for node in [node for node in tree.body if node.__class__ is ast.ClassDef and node.bases]:
            if node not in region.parents:
                continue
            # Only a base the file imports can be another module's class (read only then).
            if not any(
                isinstance(target := imported.get(_root_name(base)), str) and self.ctx.project.module_of(target) is not None
                for base in node.bases
            ):
                continue
            if classes is None:
                classes = classes_for(self.ctx)
            for foreign in classes.foreign_bases(node):
                theirs = tracing_for(foreign.ctx)
                for traced in theirs.traced_functions(reported=reported):
                    method = traced.node
                    if classes_for(foreign.ctx).owner(method) is not foreign.node:
                        continue
                    if classes.resolve(node, method.name) != (foreign.ctx, method):
                        continue  # overridden here: the traced method is not what runs
                    self._add_overrides(found, node, foreign, traced, theirs, reported)

    def _add_overrides(self, found: dict, cls: ast.ClassDef, foreign, traced: Traced, theirs: Tracing, reported):
        positional = positional_params(traced.node)
        if not positional:
            return
        me = positional[0]
        tainted = None
        # Named with its module for messages, which put a caller's name in backticks.
        via = f"{foreign.node.name}.{traced.node.name}` in `{foreign.ctx.root_path}"
        for call in theirs.scope_nodes(traced.node):
            func = getattr(call, "func", None)
            if not isinstance(call, ast.Call) or not isinstance(func, ast.Attribute):
                continue
            if not isinstance(func.value, ast.Name) or func.value.id != me:
                continue
            target = classes_for(self.ctx).resolve(cls, func.attr)
            if target is None or target[0] is not self.ctx or not isinstance(target[1], ast.FunctionDef):
                continue
            if tainted is None:
                tainted = theirs.tainted_names(traced.node, traced.traced, reported)
            params = theirs._called_params(target[1], list(call.args), call.keywords, tainted, reported, True)
            if params and target[1] not in found:
                found[target[1]] = Traced(
                    target[1], traced.transform, params, obstacle=(CALLED_IN_TRACE, via), caller=via,
                    transforms=set(traced.transforms),
                )

    def calls_leaving(self, traced: Traced, reported: Reported = NOTHING_REPORTED, may=None):
        """The calls in ``traced`` that run a function or method of another module of the
        project with tracers: (call, that module's context, its ``def``, the traced parameters
        there by name). Through the value analysis (imported functions, methods of instances of
        imported classes) and through `self` (a method an imported base class defines).
        ``may(call)``: a cheaper first look (the text of what the call names), asked before
        anything is read of another module."""
        if self.ctx.project is None:
            return []
        function = traced.node
        tainted = None
        found = []
        classes = classes_for(self.ctx)
        for node in self.scope_nodes(function):
            if node.__class__ is not ast.Call or not (node.args or node.keywords):
                continue
            call = node
            if node.args and not isinstance(node.args[0], ast.Starred) and canonical(self.ctx.qualname(node.func)) in TREE_MAPS:
                # `jax.tree.map(to_host, tree)`: the leaves of a traced tree go to the function mapped.
                call = ast.copy_location(ast.Call(func=node.args[0], args=node.args[1:], keywords=[]), node)
            # Where the call may go (its text, the cheaper look), then whether what it is
            # passed holds a tracer (the function's taint, computed for the first call that may).
            if may is not None and not may(call):
                continue
            if tainted is None:
                tainted = self.tainted_names(function, traced.traced, reported)
            if not self._passes_tracer(node, tainted, reported):
                continue
            targets = []
            callee = self.analysis.callee(call)
            if callee is not None and callee.analysis is not self.analysis:
                targets.append((callee.analysis.ctx, callee.function, callee.bound, callee.args, callee.keywords))
            elif isinstance(call.func, ast.Attribute):
                targets += [
                    (ctx, method, True, call.args, call.keywords) for ctx, method in classes.called_across(function, call.func)
                ]
            for ctx, target, bound, arguments, keywords in targets:
                params = self._called_params(target, list(arguments), keywords, tainted, reported, bound)
                if params:
                    found.append((node, ctx, target, params))
        return found

    def _add_decorated(self, found: dict, node, spellings: Spellings) -> None:
        applied = [t for t in map(spellings.transform_of, node.decorator_list) if t is not None]
        if not applied:
            return
        others = len(node.decorator_list) - len(applied)
        others -= sum(map(spellings.is_transparent, node.decorator_list))
        obstacle = None
        if others:
            obstacle = (OTHER_DECORATORS, "")
        elif isinstance(node, ast.AsyncFunctionDef):
            obstacle = (ASYNC, "")
        for transform in applied:
            _add(found, node, transform, obstacle)

    def _add_called(self, found: dict, region: Region, index, spellings: Spellings, node: ast.Call, hit):
        transform, positions = hit
        for position in positions:
            if position >= len(node.args):
                continue
            argument, fixed = self._partial_binding(node.args[position])
            # `jax.jit(jax.vmap(f, in_axes=(None, 0)))`: the outer transform traces every
            # argument the inner one passes through, unmapped ones too.
            inner = _transformed_within(spellings, argument)
            if inner is not None:
                argument, fixed = self._partial_binding(inner)
            passed = self._functions_passed(region, index, spellings, node, argument)
            if not passed and fixed is None and self._may_run_method(argument):
                # `jax.vmap(model)`: the instance's `__call__`, its arguments the call's.
                # `jax.jit(model.apply)`: flax runs the Module's `__call__` with every argument
                # but the variables, all traced (options would name apply's positions, not its).
                method = self.analysis.instance_call(argument)
                if method is None and not transform.options:
                    method = self.analysis.applied_method(argument)
                if method is not None and method.analysis is self.analysis:
                    passed = [(method.function, True)]
            for function, bound in passed:
                # `jax.jit(partial(loss, model=model))`: bound arguments are constants.
                constants = partial_constants(function, fixed, bound) if fixed else frozenset()
                _add(found, function, transform, (BY_CALL, ""), bound=bound, constants=constants)

    def _add_helpers(self, region: Region, index, spellings: Spellings, found: dict, reported: Reported):
        """Functions of this file called from inside a trace with tracer arguments
        (`scaled(x)`, `jax.named_call(scaled, name="s")(x)`, `jax.tree.map(record, params)`) run
        in the trace too. Host callbacks (`jax.pure_callback(host, ...)`) are not calls of
        their function: it runs on concrete arrays."""
        pending = list(found.values())
        for _ in range(3):  # helpers of helpers, a few levels deep
            added = []
            for traced in pending:
                added += self._helpers_of(traced, region, index, spellings, found, reported)
            if not added:
                return
            pending = added

    def _helpers_of(self, traced: Traced, region: Region, index, spellings, found: dict, reported):
        added = []
        tainted = None  # computed for the first call of a function of this file
        # In a helper, only what comes before its first compound statement surely runs on the tracer.
        after = first_compound_line(traced.node) if traced.caller else None
        caller = name_of(traced.node)
        for node in self.scope_nodes(traced.node):
            if not isinstance(node, ast.Call) or (after is not None and node.lineno >= after):
                continue
            callee, arguments, keywords = node.func, list(node.args), node.keywords
            if node.args and canonical(self.ctx.qualname(callee)) in TREE_MAPS:
                callee, arguments = node.args[0], node.args[1:]  # a leaf of a traced tree is traced
            passed = self._functions_passed(region, index, spellings, node, callee, traced.node)
            # `double_host = functools.partial(scaled_host, scale=2.0)` at module level: the value
            # analysis reads a keyword-only partial of a function as that function.
            if not passed and callee is node.func and (
                self._may_run_method(callee) or (callee.__class__ is ast.Name and callee.id in self._partial_aliases())
            ):
                # `Model().encode(x)`, `model(x)` with `model = Model()` inside the trace,
                # `model.apply(variables, x)`: a method of an instance of this file's class.
                method = self.analysis.callee(node)
                if method is not None and method.analysis is self.analysis:
                    passed = [(method.function, method.bound)]
                    arguments, keywords = method.args, method.keywords
            for function, bound in passed:
                if tainted is None:
                    tainted = self.tainted_names(traced.node, traced.traced, reported)
                params = self._called_params(function, arguments, keywords, tainted, reported, bound)
                # A method called through `self` or `super()`: the traced method, by its class.
                owner = classes_for(self.ctx).owner(traced.node) if bound else None
                via = f"{owner.name}.{caller}" if owner is not None else caller
                if params and function in found:
                    # A traced function called inside another trace: it runs in that trace too.
                    known = found[function]
                    known.transforms |= traced.transforms
                    known.obstacle = known.obstacle or (CALLED_IN_TRACE, via)
                elif params:
                    helper = Traced(
                        function,
                        traced.transform,
                        params,
                        obstacle=(CALLED_IN_TRACE, via),
                        caller=via,
                        transforms=set(traced.transforms),
                    )
                    found[function] = helper
                    added.append(helper)
        return added

    def _partial_aliases(self) -> frozenset[str]:
        """Module-level names bound to a `functools.partial(...)` call of a name."""
        found = self.__dict__.get("_partials")
        if found is None:
            found = self.__dict__["_partials"] = frozenset(
                statement.targets[0].id
                for statement in self.ctx.tree.body
                if statement.__class__ is ast.Assign
                and len(statement.targets) == 1
                and statement.targets[0].__class__ is ast.Name
                and statement.value.__class__ is ast.Call
                and statement.value.args
                and statement.value.args[0].__class__ is ast.Name
                and canonical(self.ctx.qualname(statement.value.func)) == PARTIAL
            ) if "partial" in self.ctx.text else frozenset()
        return found

    def _may_run_method(self, callee: ast.expr) -> bool:
        """From names alone, whether calling ``callee`` may run a method of this file's classes
        (``Analysis.callee`` decides): an attribute one of them defines or a library base's
        ``applies`` (`model.apply`), or an instance called (`model(x)`, `Model()(x)`) where one
        of them defines `__call__`."""
        names = self.__dict__.get("_method_names")
        if names is None:
            names = self.__dict__["_method_names"] = _module_method_names(self.ctx.tree)
        if not names:
            return False  # most files: no class with a method
        bindings = self.ctx._bindings
        if callee.__class__ is ast.Attribute:
            receiver = callee.value
            # Not a module's function (`np.asarray`, `nn.Dense`).
            imported = receiver.__class__ is ast.Name and isinstance(bindings.get(receiver.id), str)
            return (callee.attr in names or callee.attr in APPLIERS) and not imported
        if "__call__" not in names:
            return False
        if callee.__class__ is ast.Call:  # `Model(s)(x)`: a class of the file, called
            return callee.func.__class__ is ast.Name and callee.func.id in classes_for(self.ctx)._module
        # `model(x)`: a name the file binds to an instance of its class (`model = Model(s)`).
        return callee.__class__ is ast.Name and callee.id in self._instance_names()

    def _instance_names(self) -> frozenset[str]:
        """The names the file assigns an instance of one of its module-level classes with a
        `__call__` to, in any scope (`model = Model(s)`)."""
        found = self.__dict__.get("_instances_named")
        if found is None:
            classes = _callable_classes(classes_for(self.ctx)._module)
            text = self.ctx.text
            if classes and text.isascii():
                # `name = Model(s)` holds `=`, then blanks, brackets or comments, then the call:
                # a class called nowhere so binds no name (one scan, not one per class).
                classes &= set(_ASSIGNED_CALL.findall(text))
            found = frozenset(bound for name in classes for bound in self.analysis.instance_names(name))
            self.__dict__["_instances_named"] = found
        return found

    def _called_params(self, function, arguments, keywords, tainted: set[str], reported: Reported, bound=False):
        """The parameters of ``function`` that a call passes a tracer to (``bound``: a method
        called through its instance, whose first parameter the call does not pass)."""
        positional = positional_params(function)[1 if bound else 0 :]
        traced = set()
        for name, argument in zip(positional, arguments):
            if isinstance(argument, ast.Starred):
                break
            if self.is_traced(argument, tainted, reported):
                traced.add(name)
        names = {a.arg for a in all_params(function)}
        for keyword in keywords:
            if keyword.arg in names and self.is_traced(keyword.value, tainted, reported):
                traced.add(keyword.arg)
        return frozenset(traced)

    def _partial_binding(self, argument: ast.AST) -> tuple[ast.AST, ast.Call | None]:
        return partial_binding(self.ctx, argument)

    def _functions_passed(self, region: Region, index, spellings: Spellings, call, argument, scope=None):
        """(function, bound) for each function ``argument`` may be; ``bound``: a method reached
        through `self`, whose first parameter is not an argument of the transformed function."""
        argument = spellings.unwrap(argument)
        if isinstance(argument, ast.Lambda):
            return [(argument, False)]
        if isinstance(argument, (ast.List, ast.Tuple)):  # lax.switch branches
            elements = argument.elts
            return [f for e in elements for f in self._functions_passed(region, index, spellings, call, e, scope)]
        if isinstance(argument, ast.Attribute):
            if scope is not None:  # a call inside a traced method: `self.hook(x)`, `super().hook(x)`
                found = self._dispatched(scope, argument)
                if not found and isinstance(argument.value, ast.Name):
                    # `model.apply(x)`: a method of a module-level instance of the file's class.
                    found = self._instance_methods(argument.value.id, argument.attr, scope)
                return [(method, True) for method in found]
            return [(method, True) for method in _self_methods(region, call, argument)]
        if not isinstance(argument, ast.Name):
            return []
        elements = _comprehension_elements(region, call, argument.id)
        if elements is not None:
            return [f for e in elements for f in self._functions_passed(region, index, spellings, call, e, scope)]
        # Only functions of the region matter. The name resolves like a closure: the call's own
        # scope first, then the enclosing ones.
        definitions = index.get(argument.id, [])
        if not definitions and scope is not None:
            # `model(x)` inside a trace: the `__call__` of a module-level instance.
            return [(method, True) for method in self._instance_methods(argument.id, "__call__", scope)]
        scope = scope or region.scope_of(call)
        grouped = region.scopes_defining(definitions) if definitions else {}
        while definitions:
            here = grouped.get(scope, [])
            if here or scope is None:
                return [(node, False) for node in here]
            # A store in ``scope`` hides the outer definitions: asked (a walk of the scope, most
            # often a test method that is not traced) only where one is further out.
            if not region.defined_outside(grouped, scope) or argument.id in self.stored_names(scope):
                return []
            scope = region.scope_of(scope)
        return []

    def _instance_methods(self, name: str, attr: str, scope: ast.AST) -> list[ast.FunctionDef]:
        """The method ``attr`` of the file's class that ``name`` holds an instance of: ``name``
        bound once in the whole module, at its top level, to ``Class(...)`` (a class of this
        module, bound once), and not in ``scope`` or a function around it; else nothing."""
        instances = self.__dict__.get("_module_instances")
        if instances is None:
            instances = self.__dict__["_module_instances"] = self._find_module_instances()
        cls = instances.get(name)
        if cls is None:
            return []  # most calls: `jnp.sum(x)`, `len(x)`, a library's function
        # Stores anywhere make the module-level count more than one; a parameter is no store.
        for function in (scope, *(a for a in self.ctx.ancestors(scope) if isinstance(a, _FUNCTIONS))):
            if isinstance(function, _FUNCTIONS) and name in {p.arg for p in all_params(function)}:
                return []
        target = classes_for(self.ctx).resolve(cls, attr)
        if target is None or target[0] is not self.ctx or not isinstance(target[1], (ast.FunctionDef, ast.AsyncFunctionDef)):
            return []
        if any(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod", "property") for d in target[1].decorator_list):
            return []
        return [target[1]]

    def _find_module_instances(self) -> dict[str, ast.ClassDef]:
        """Module-level names bound once, to an instance of a module-level class of the file."""
        tree = self.ctx.tree
        candidates = [
            statement for statement in tree.body
            if isinstance(statement, ast.Assign)
            and isinstance(statement.value, ast.Call)
            and isinstance(statement.value.func, ast.Name)
        ]
        if not candidates:
            return {}  # most files: no walk
        classes = classes_for(self.ctx)._module
        candidates = [s for s in candidates if s.value.func.id in classes]
        if not candidates:
            return {}
        counts: dict[str, int] = {}
        for node in walk_values(tree):  # (counts: the order is of no matter)
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                counts[node.id] = counts.get(node.id, 0) + 1
            elif isinstance(node, (*_FUNCTIONS, ast.ClassDef)) and not isinstance(node, ast.Lambda):
                counts[node.name] = counts.get(node.name, 0) + 1
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                for global_name in node.names:
                    counts[global_name] = counts.get(global_name, 0) + 2
        found = {}
        for statement in candidates:
            if len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
                name = statement.targets[0].id
                if counts.get(name) == 1:
                    found[name] = classes[statement.value.func.id]
        return found

    def _dispatched(self, method: ast.AST, func: ast.Attribute) -> list[ast.FunctionDef]:
        """The methods of the file's classes a call of ``func`` in ``method`` runs
        (``classes.Classes.called``: overrides in subclasses, `super()`), unless ``method``
        rebinds its `self`."""
        positional = positional_params(method) if not isinstance(method, ast.Lambda) else []
        receiver = func.value
        through_self = receiver.__class__ is ast.Name and bool(positional) and receiver.id == positional[0]
        if not through_self and not (receiver.__class__ is ast.Call and getattr(receiver.func, "id", None) == "super"):
            return []  # most calls of a traced function: `jnp.sum(x)`, `x.reshape(-1)`
        if not positional or positional[0] in self.stored_names(method):
            return []
        return classes_for(self.ctx).called(method, func)

    # Which transforms the value analysis sees --------------------------------------------

    def function_transforms(self, function: ast.AST) -> list:
        """Transforms ``function`` runs under, as the value analysis resolves them: its
        decorators, and calls that pass it to one (``Transform`` records); without
        either, the decorators the file spells as transforms."""
        analysis = self.analysis
        found = []
        for decorator in getattr(function, "decorator_list", ()):
            transform = analysis.applied_transform(decorator)
            if transform is not None:
                found.append(replace(transform, function=function))
        if isinstance(function, ast.Lambda):
            parent = self.ctx.parent(function)
            if isinstance(parent, ast.Call) and parent.args and parent.args[0] is function:
                transform = analysis.applied_transform(parent.func)
                if transform is not None:
                    found.append(transform.with_options(parent.keywords, function))
            return found
        for call in analysis.calls_passing(getattr(function, "name", "")):
            transform = analysis.applied_transform(call.func)
            if transform is not None and function in analysis.function_definitions(call.args[0]):
                found.append(transform.with_options(call.keywords, function))
        return found or self._spelled_transforms(function)

    def _spelled_transforms(self, function: ast.AST) -> list:
        found = []
        for decorator in getattr(function, "decorator_list", ()):
            spelled = self.spellings.transform_of(decorator)
            if spelled is not None and spelled.readable:
                found.append(self.analysis.transform_from_spelling(spelled, function))
        return found

    def traced_parameter(self, parameter: ast.arg, function: ast.AST) -> bool:
        """Whether ``parameter`` is a tracer under every tracing transform ``function_transforms``
        gives (and there is one)."""
        transforms = [t for t in self.function_transforms(function) if t.traces]
        if not transforms:
            return False
        for transform in transforms:
            # Which arguments each transform traces (static, unmapped, undifferentiated ones
            # are concrete).
            readable = not transform.has_unknown_options
            spelled = Transform(transform.name, transform.options, readable=readable)
            traced = traced_parameters(function, spelled)
            if traced is None or parameter.arg not in traced[0]:
                return False
        return True

    def is_tracer(self, expr: ast.AST) -> bool:
        """The whole-file value analysis' answer: ``expr``'s value is a ``TRACER``."""
        return self.analysis.is_tracer(expr)

    def only_under_config_flag(self, function: ast.AST, node: ast.AST, flag: str) -> bool:
        """Whether ``node`` runs only in an `if config.<flag>.value:` branch of ``function``
        (``jax.config``, read under any of its spellings)."""
        if flag not in self.ctx.text:
            return False
        # The branches' lines, found once per function and flag (asked for each access in it).
        known = self.__dict__.setdefault("_flag_branches", {})
        branches = known.get((function, flag))
        if branches is None:
            branches = known[(function, flag)] = [
                (statement.body[0].lineno, statement.body[-1].end_lineno)
                for statement in self.scope_nodes(function)
                if isinstance(statement, ast.If) and statement.body and any(
                    isinstance(part, ast.Attribute) and part.attr == flag and self.ctx.qualname(part.value) in CONFIG_MODULES
                    for part in ast.walk(statement.test)
                )
            ]
        return any(first <= node.lineno <= last for first, last in branches)

    # Nodes of a function ----------------------------------------------------------------

    def scope_nodes(self, scope: ast.AST) -> list[ast.AST]:
        """Nodes of ``scope``'s own body, not of the functions or classes nested in it (nor
        contexts and operators: every reader looks for other nodes).

        Walked once per function: the traced-function search, the helper search, the taint
        and a rule's scan all read the same function's nodes."""
        nodes = self._nodes.get(scope)
        if nodes is None:
            nodes = self._nodes[scope] = own_nodes(scope)
        return nodes

    def stored_names(self, function: ast.AST) -> set[str]:
        """The names ``function``'s own body stores."""
        stored = self._stored.get(function)
        if stored is None:
            # (The parser makes no subclasses of them: a class test, the cheapest.)
            stored = self._stored[function] = {
                node.id
                for node in self.scope_nodes(function)
                if node.__class__ is ast.Name and node.ctx.__class__ is ast.Store
            }
        return stored

# What may come between an assignment's `=` and the call of a name it binds, and between the name
# and its parenthesis: blanks, line ends, brackets, backslashes, comments (`x = (Model)(s)`; an
# ASCII text, whose names are spelled as parsed).
_ASSIGNED_CALL = re.compile(r"=(?:[\s(\\]|#[^\n]*)*([A-Za-z_]\w*)(?:[\s)\\]|#[^\n]*)*\(")


def _callable_classes(classes: dict[str, ast.ClassDef]) -> set[str]:
    """The names of ``classes`` (a module's, by name) that define `__call__`, or derive from
    one of them that does (read from the names of their bases: no other module is read)."""
    found = {
        name for name, cls in classes.items()
        if any(m.__class__ is ast.FunctionDef and m.name == "__call__" for m in cls.body)
    }
    grown = True
    while grown:
        grown = False
        for name, cls in classes.items():
            if name not in found and any(getattr(base, "id", None) in found for base in cls.bases):
                found.add(name)
                grown = True
    return found


def _module_method_names(tree: ast.Module) -> frozenset[str]:
    """The names of the methods the module-level classes of ``tree`` define (the classes whose
    instances a traced call is asked about: ``Tracing._may_run_method``)."""
    return frozenset(
        member.name
        for node in tree.body
        if node.__class__ is ast.ClassDef
        for member in node.body
        if member.__class__ in (ast.FunctionDef, ast.AsyncFunctionDef)
    )


def _root_name(expr: ast.AST) -> str | None:
    while isinstance(expr, ast.Attribute):
        expr = expr.value
    return expr.id if isinstance(expr, ast.Name) else None


def own_nodes(scope: ast.AST) -> list[ast.AST]:
    """``Tracing.scope_nodes``, walked anew (for a caller without the file's ``Tracing``)."""
    nodes: list[ast.AST] = []
    stack = list(scope.body) if isinstance(scope.body, list) else [scope.body]
    pop, push, add, node_class, fields_of, scopes = stack.pop, stack.append, nodes.append, ast.AST, CHILD_FIELDS.get, _SCOPE_CLASSES
    while stack:
        node = pop()
        add(node)
        if node.__class__ in scopes:
            continue
        # scopes.children, inlined (children pushed one by one, in field order: no list made
        # per field of every node).
        fields = fields_of(node.__class__)
        for name in child_fields(node.__class__) if fields is None else fields:
            value = getattr(node, name, None)
            if value.__class__ is list:
                for item in value:
                    if isinstance(item, node_class):
                        push(item)
            elif isinstance(value, node_class):
                push(value)
    return nodes


def _take_subtree(root: ast.AST, parents: dict, nodes: list) -> None:
    """``Region``'s walk below ``root`` with every node in (names and constants left out)."""
    leaves, node_class, fields_of = _LEAVES, ast.AST, CHILD_FIELDS.get
    stack = [root]
    pop, push, add = stack.pop, stack.append, nodes.append
    while stack:
        node = pop()
        add(node)
        fields = fields_of(node.__class__)
        for name in child_fields(node.__class__) if fields is None else fields:
            value = getattr(node, name, None)
            if value.__class__ is list:
                for child in value:
                    if child.__class__ not in leaves and isinstance(child, node_class):
                        parents[child] = node
                        push(child)
            elif value.__class__ not in leaves and isinstance(value, node_class):
                parents[value] = node
                push(value)


class _LeadingIndex(dict):
    """A region's functions by name and, asked for by name, the module-level functions outside
    the region that call one of them, a few levels deep (`def _mid(x, s): _leaf(s)`, where only
    `_leaf` is in the region): a traced function calling `_mid` runs `_leaf` in its trace too.
    Only the names traced code calls are looked up, so only those functions are walked."""

    def __init__(self, index: dict, tracing: Tracing, region: Region) -> None:
        super().__init__(index)
        self._tracing, self._region = tracing, region
        self._outside: dict[str, list[ast.FunctionDef]] | None = None
        self._decided: dict[str, list[ast.FunctionDef] | None] = {}

    def get(self, name, default=None):
        found = super().get(name)
        if found is not None:
            return found
        led = self._leading(name, 0)
        return default if led is None else led

    def _leading(self, name: str, depth: int) -> list[ast.FunctionDef] | None:
        if name in self._decided:
            return self._decided[name]
        if self._outside is None:
            parents, own = self._region.parents, dict.keys(self)
            self._outside = {}
            for node in self._tracing.ctx.tree.body:
                if node.__class__ is ast.FunctionDef and node.name not in own and node not in parents:
                    self._outside.setdefault(node.name, []).append(node)
        functions = self._outside.get(name)
        self._decided[name] = None  # a recursive chain leads nowhere new
        if functions and depth < 2 and any(
            node.__class__ is ast.Call
            and node.func.__class__ is ast.Name
            and (dict.__contains__(self, node.func.id) or self._leading(node.func.id, depth + 1) is not None)
            for function in functions
            for node in self._tracing.scope_nodes(function)
        ):
            self._decided[name] = functions
        return self._decided[name]


def _passes_through(every: dict[str, list[ast.FunctionDef]], decorator: ast.expr) -> bool:
    """Whether ``decorator`` is a function of the file (``every``: its functions by name) that
    hands on the function it decorates as a trace sees it: one parameter, and it returns that
    parameter (a registry's decorator) or a nested wrapper that calls it with all of the
    wrapper's arguments (`@functools.wraps(fn) def wrapper(*args, **kwargs): return fn(*args,
    **kwargs)`). A transform of the decorated function then traces the function as written."""
    defs = every.get(decorator.id) if decorator.__class__ is ast.Name else None
    if not defs or len(defs) != 1:
        return False
    outer = defs[0]
    parameters = [*outer.args.posonlyargs, *outer.args.args]
    if outer.decorator_list or len(parameters) != 1 or outer.args.vararg or outer.args.kwarg:
        return False
    given, last = parameters[0].arg, outer.body[-1]
    if last.__class__ is not ast.Return or last.value.__class__ is not ast.Name:
        return False
    if last.value.id == given:
        return True
    inner = next((s for s in outer.body if s.__class__ is ast.FunctionDef and s.name == last.value.id), None)
    if inner is None:
        return False
    own = inner.args
    if own.posonlyargs or own.args or own.kwonlyargs or own.vararg is None or own.kwarg is None:
        return False
    return any(_calls_with_all(node, given, own) for node in ast.walk(inner))


def _calls_with_all(node: ast.AST, function: str, own: ast.arguments) -> bool:
    """``node`` is `function(*args, **kwargs)` with a wrapper's own `*args` and `**kwargs`."""
    return (
        node.__class__ is ast.Call
        and node.func.__class__ is ast.Name
        and node.func.id == function
        and len(node.args) == 1
        and node.args[0].__class__ is ast.Starred
        and getattr(node.args[0].value, "id", None) == own.vararg.arg
        and len(node.keywords) == 1
        and node.keywords[0].arg is None
        and getattr(node.keywords[0].value, "id", None) == own.kwarg.arg
    )


def _transformed_within(spellings: Spellings, argument: ast.AST, depth: int = 0) -> ast.AST | None:
    """The function a transform call given as ``argument`` transforms (innermost first)."""
    argument = spellings.unwrap(argument)
    if depth > 3 or not isinstance(argument, ast.Call):
        return None
    hit = spellings.applied(argument)
    if hit is None:
        return None
    _, positions = hit
    if not positions or positions[0] >= len(argument.args):
        return None
    function = argument.args[positions[0]]
    return _transformed_within(spellings, function, depth + 1) or function


def partial_binding(ctx, argument: ast.AST) -> tuple[ast.AST, ast.Call | None]:
    """`functools.partial(f, a, k=v)` -> (f, the partial call); anything else -> (it, None)."""
    if (
        isinstance(argument, ast.Call)
        and argument.args
        and canonical(ctx.qualname(argument.func)) == PARTIAL
        and not any(isinstance(a, ast.Starred) for a in argument.args)
    ):
        return argument.args[0], argument
    return argument, None


def partial_constants(function, partial_call: ast.Call, bound: bool) -> set[str]:
    """The parameters of ``function`` a `functools.partial` call binds (``partial_binding``):
    constants, whatever a transform of the partial traces."""
    positional = positional_params(function)[1 if bound else 0 :]
    names = set(positional[: len(partial_call.args) - 1])
    return names | {k.arg for k in partial_call.keywords if k.arg is not None}


def _self_methods(region: Region, call: ast.Call, argument: ast.Attribute) -> list[ast.FunctionDef]:
    """`jax.jit(self._step)` inside a method: the class's own `_step`."""
    method = region.scope_of(call)
    if not isinstance(method, ast.FunctionDef) or not isinstance(argument.value, ast.Name):
        return []
    positional = positional_params(method)
    owner = region.parents.get(method)
    if not positional or argument.value.id != positional[0] or not isinstance(owner, ast.ClassDef):
        return []
    return [
        node
        for node in owner.body
        if isinstance(node, ast.FunctionDef) and node.name == argument.attr and not node.decorator_list
    ]


def _comprehension_elements(region: Region, call: ast.Call, name: str) -> list[ast.AST] | None:
    """`[jax.jit(f) for f in (a, b)]`, `{k: jax.jit(f) for k, f in {"a": a}.items()}`: what the
    comprehension variable ``name`` runs over, when that is written out; None when ``name`` is
    not a comprehension variable around ``call``."""
    node = region.parents.get(call)
    while node is not None and not isinstance(node, (ast.stmt, ast.Lambda)):
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            for generator in node.generators:
                target, iterable = generator.target, generator.iter
                if isinstance(target, ast.Name) and target.id == name:
                    if isinstance(iterable, (ast.List, ast.Tuple, ast.Set)):
                        return list(iterable.elts)
                    if isinstance(iterable, ast.Dict) or _dict_view(iterable, "values"):
                        return list((iterable if isinstance(iterable, ast.Dict) else iterable.func.value).values)
                    return []
                if (
                    isinstance(target, ast.Tuple)
                    and len(target.elts) == 2
                    and isinstance(target.elts[1], ast.Name)
                    and target.elts[1].id == name
                ):
                    return list(iterable.func.value.values) if _dict_view(iterable, "items") else []
        node = region.parents.get(node)
    return None


def _dict_view(expr: ast.AST, method: str) -> bool:
    return (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Attribute)
        and expr.func.attr == method
        and isinstance(expr.func.value, ast.Dict)
        and not expr.args
    )


def _add(found: dict, function, transform: Transform, obstacle, bound: bool = False, constants=frozenset()):
    parameters = traced_parameters(function, transform, bound)
    if parameters is None:
        return  # options we cannot read: which arguments are static is unknown
    traced_names, donated_names = parameters
    traced_names = traced_names - constants
    previous = found.get(function)
    if previous is not None:
        previous.obstacle = previous.obstacle or (TRACED_TWICE, "")
        previous.traced = previous.traced | traced_names
        previous.transforms.add(transform.name)
        if previous.transform in JIT_LIKE:
            previous.transform = transform.name
        return
    found[function] = Traced(function, transform.name, traced_names, donated_names, obstacle, transform)
