"""How a file spells a traced function: `jax.jit` and the other transforms, through aliases,
`functools.partial`, decorator factories, calls, methods and collections of functions.

Any rule that needs to know "is this function traced, by what, with which options" asks a
``Spellings`` built once per file. Names are matched by qualified name (through the file's
imports), never by spelling; what cannot be read (options built at run time, factories
with more than a `return`) is reported as unreadable rather than guessed.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import cache, cached_property
from itertools import accumulate
from typing import TYPE_CHECKING

from jax_codemod.analysis import api
from jax_codemod.analysis.names import canonical
from jax_codemod.analysis.patterns import alternation, starts_of

if TYPE_CHECKING:  # for annotations only: context reaches this module through values, lazily
    from jax_codemod.analysis.context import FileContext

JIT = "jax.jit"
PARTIAL = "functools.partial"
# Transforms that trace every argument that is not static, like `jax.jit`, and keep the
# Python function's calling convention: a function they decorate can be split.
JIT_LIKE = api.public_names(transform="jit")
# Transforms under which moving code out of the trace changes its meaning -> (positions of
# the traced functions among the call's arguments, the option naming traced argument positions).
OTHER_TRANSFORMS: dict[str, tuple[tuple[int, ...], str | None]] = {
    record.name: (record.traced_args, record.traced_by)
    for record in api.records(transform=True, public=None)
    if record.transform != "jit"
}
TRANSFORMS = JIT_LIKE | frozenset(OTHER_TRANSFORMS)
# Transforms whose function's first parameter is a linen Module, not an array.
MODULE_FIRST = frozenset(name for name in OTHER_TRANSFORMS if name.startswith("flax.linen."))
# Decorators that only name the traced computation: stacked with a transform they change
# nothing a split has to preserve beyond being kept on the traced function.
TRANSPARENT = frozenset({"jax.named_call", "jax.named_scope"})
# Host callbacks run their function on concrete arrays outside the trace: never traced.
HOST_CALLBACKS = frozenset(
    {
        "jax.pure_callback",
        "jax.debug.callback",
        "jax.experimental.io_callback",
        "jax.experimental.pure_callback",
        "jax.experimental.host_callback.call",
        "jax.experimental.host_callback.id_tap",
    }
)
# ...and what calling one inside a trace gives is a tracer, whatever it is given (the callback's
# result comes back into the trace), except `jax.debug.callback`'s None.
CALLBACK_RESULTS = HOST_CALLBACKS - {"jax.debug.callback"}
# The last component of every transform's name: a cheap test before resolving a name.
TRANSFORM_LEAVES = frozenset({"partial", *(name.rsplit(".", 1)[1] for name in TRANSFORMS)})
_NAMED = TRANSFORMS | {PARTIAL}


@cache
def _leaf_word() -> re.Pattern[str]:
    # Compiled on first use (a module-level function without decorators asks): not at import.
    # The lookahead first: the engine skips to where a name may begin (``patterns.starts_of``).
    return re.compile(rf"{starts_of(TRANSFORM_LEAVES)}\b{alternation(TRANSFORM_LEAVES)}\b")


@dataclass(frozen=True)
class Transform:
    """A transform applied to a function: the one record of it, for the spellings here and
    for the value analysis (``values.Analysis.transform_of``).

    ``name``: its public qualified name (``jax.jit``). ``options``: the keywords it is applied
    with (`static_argnums=...`), already substituted through a factory's parameters;
    ``readable`` is False when they cannot be known statically (a factory argument computed
    at run time, `**options`). ``how``: "decorator", "partial", "alias", "factory", "options"
    (`@jax.jit(...)`) or "call". ``function``: the transformed function, when the file defines
    it; ``why``: where the value analysis found it, for messages.
    """

    name: str
    options: tuple[ast.keyword, ...] = ()
    how: str = "decorator"
    readable: bool = True
    function: ast.AST | None = None
    why: str = ""

    @property
    def jit_like(self) -> bool:
        return self.name in JIT_LIKE

    @property
    def traces(self) -> bool:
        return self.name in TRANSFORMS

    def option(self, name: str) -> ast.expr | None:
        found = None
        for keyword in self.options:
            if keyword.arg == name:
                found = keyword.value
        return found

    @property
    def has_unknown_options(self) -> bool:
        """``**options`` spread into the transform: what it sets is not known."""
        return any(keyword.arg is None for keyword in self.options)

    def with_options(self, keywords: Iterable[ast.keyword], function: ast.AST | None = None) -> Transform:
        return replace(
            self,
            options=(*self.options, *keywords),
            function=function if function is not None else self.function,
        )


@dataclass
class _Factory:
    """A module-level function that returns a transform on every path.

    ``bare``: used as `@factory`, it applies the transform to the function it is given
    (`def jit(fn, **kw): return jax.jit(fn, **kw)`); ``called``: `@factory(...)` returns a
    decorator (`return partial(jax.jit, **kw)`, `return lambda f: jax.jit(f, **kw)`, or an
    inner `def decorator(fn): return jax.jit(fn, **kw)`). Both hold for the common
    `def jit(fn=None, **kw)` that accepts either use.
    """

    node: ast.FunctionDef
    returned: Transform
    bare: bool
    called: bool

    @property
    def takes_function(self) -> bool:
        return self.bare and not self.called


def spellings_of(ctx) -> Spellings:
    """The file's one ``Spellings`` (kept on the context, which the engine clears when the file
    is done), for the readers that need no spellings of their own."""
    found = ctx.__dict__.get("_spellings")
    if found is None:
        found = ctx.__dict__["_spellings"] = Spellings(ctx)
    return found


@dataclass
class Spellings:
    """The transforms of one file: module-level aliases and decorator factories, and the
    queries rules make about decorators and calls."""

    ctx: FileContext
    aliases: dict[str, Transform] = field(default_factory=dict)
    factories: dict[str, _Factory] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for statement in self.ctx.tree.body:
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
                target = statement.targets[0]
                if isinstance(target, ast.Name):
                    found = self._direct(statement.value)
                    if found is not None:
                        self.aliases[target.id] = Transform(found.name, found.options, "alias", found.readable)
            elif isinstance(statement, ast.FunctionDef) and not statement.decorator_list and self._names_transform(statement):
                factory = self._factory(statement)
                if factory is not None:
                    self.factories[statement.name] = factory
        # A name bound twice at module level is not known to be either.
        for name in list(self.aliases):
            if self._bound_more_than_once(name):
                del self.aliases[name]

    # Queries ---------------------------------------------------------------------------

    def transform_of(self, expr: ast.AST) -> Transform | None:
        """The transform a decorator expression applies, or None."""
        found = self._direct(expr)
        if found is not None:
            return found
        if isinstance(expr, ast.Name) and expr.id in self.aliases:
            return self.aliases[expr.id]
        if isinstance(expr, ast.Name) and expr.id not in self.factories and self.ctx.project is not None:
            imported = self._imported(expr.id)
            if isinstance(imported, Transform):
                return imported
            if isinstance(imported, _Factory) and imported.bare:  # `@my_jit` from another module
                return self._substituted(imported, None)
        if isinstance(expr, ast.Name) and expr.id in self.factories:
            factory = self.factories[expr.id]
            if factory.bare:  # `@compile` with `def compile(fn): return jax.jit(fn, ...)`
                return self._substituted(factory, None)
            return None
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name):
            factory = self.factories.get(expr.func.id)
            if factory is None and self.ctx.project is not None:
                imported = self._imported(expr.func.id)
                factory = imported if isinstance(imported, _Factory) else None
            if factory is not None and factory.called and not (factory.bare and expr.args):
                return self._substituted(factory, expr)
        return None

    def applied(self, call: ast.Call) -> tuple[Transform, tuple[int, ...]] | None:
        """For a call that applies a transform to functions (`jax.jit(f, ...)`,
        `partial(jax.jit, ...)(f)`, `alias(f)`, `lax.scan(body, ...)`): the transform and the
        positions of the traced functions among the call's arguments."""
        if not call.args or not self._may_name(call.func):
            return None
        name = canonical(self.ctx.qualname(call.func)) if isinstance(call.func, (ast.Name, ast.Attribute)) else None
        if name in JIT_LIKE:
            return Transform(name, tuple(call.keywords), "call", _readable(call.keywords)), (0,)
        if name in OTHER_TRANSFORMS:
            return Transform(name, tuple(call.keywords), "call", _readable(call.keywords)), OTHER_TRANSFORMS[name][0]
        # `partial(jax.jit, ...)(f)`, `alias(f)`, `factory(...)(f)`: a decorator called by hand.
        decorator = self.transform_of(call.func)
        if decorator is None and isinstance(call.func, ast.Name) and call.func.id in self.factories:
            factory = self.factories[call.func.id]
            if factory.bare:
                decorator = self._substituted(factory, call, skip_first=True)
        if decorator is None:
            return None
        keywords = tuple(decorator.options) + tuple(call.keywords)
        return Transform(decorator.name, keywords, "call", decorator.readable and _readable(call.keywords)), (0,)

    def is_transparent(self, expr: ast.AST) -> bool:
        """`@jax.named_call`, `@jax.named_scope("name")`: decorators that only name the computation."""
        target = expr.func if isinstance(expr, ast.Call) else expr
        return isinstance(target, (ast.Name, ast.Attribute)) and canonical(self.ctx.qualname(target)) in TRANSPARENT

    def unwrap(self, expr: ast.AST) -> ast.AST:
        """The function under transparent wrappers: `jax.named_call(f, name="step")` -> `f`."""
        while isinstance(expr, ast.Call) and expr.args and self.is_transparent(expr):
            expr = expr.args[0]
        return expr

    @cached_property
    def call_names(self) -> frozenset[str]:
        """Bare names that may apply a transform in this file, for a quick textual scan."""
        # Names imported from the project count as they are (reading each module they come from
        # to be sure would parse every module a file imports, for a textual scan).
        return frozenset({*TRANSFORM_LEAVES, *self.aliases, *self.factories, *self._project_imports})

    @cached_property
    def imported_names(self) -> frozenset[str]:
        """Names the file imports from another module of its project, which may be a transform
        alias or a decorator factory there (``from .compile import compiled``): not read, so a
        superset, for the scans that only narrow what is parsed."""
        return frozenset(self._project_imports)

    # Spellings of the project's other modules (issue 34) ------------------------------

    @cached_property
    def _project_imports(self) -> dict[str, tuple[str, str]]:
        """Names the file imports from another module of its project: name -> (that module's
        path, the name there). ``from .compile import compiled`` gives ``compiled``."""
        project = self.ctx.project
        if project is None:
            return {}
        found = {}
        libraries = project.libraries  # (module_of's first test, here: most of a file's names)
        # (One comprehension over every module-level name the file binds, most of them no
        # import: the loop it replaced spent more than the questions that follow.)
        imported = [
            (name, target) for name, target in self.ctx._bindings.items()
            if target.__class__ is str and "." in target and target.partition(".")[0] not in libraries
        ]
        for name, target in imported:
            if name not in self.aliases and name not in self.factories:
                where = project.module_of(target, self.ctx.root_path)
                if where is not None and len(where[1]) == 1:
                    found[name] = (where[0], where[1][0])
        return found

    def _imported(self, name: str) -> Transform | _Factory | None:
        """The alias or decorator factory ``name`` is in the module it is imported from, read
        by that module's own spellings (so a re-export of a re-export is followed)."""
        cache = self.__dict__.setdefault("_imported_cache", {})
        if name in cache:
            return cache[name]
        cache[name] = None  # a cycle of modules answers: not a transform
        where = self._project_imports.get(name)
        project = self.ctx.project
        if where is not None and _may_spell(project, where[0], where[1]):
            guard = project.asking(where[0])
            # Most names imported from a module are no spelling there (a class, a helper): which
            # are is kept per content, so the module is parsed once a run to say, not once a file.
            spelled = project.known(where[0], _spelled_names) if guard is not None else None
            other = project.context(where[0]) if spelled is not None and where[1] in spelled else None
            if other is not None:
                with guard:
                    theirs = spellings_of(other)
                    found = theirs.aliases.get(where[1]) or theirs.factories.get(where[1])
                    if found is None and where[1] not in theirs.aliases:
                        found = theirs._imported(where[1])
                cache[name] = found
        return cache[name]

    # Reading spellings -----------------------------------------------------------------

    def _may_name(self, expr: ast.AST) -> bool:
        if isinstance(expr, ast.Attribute):
            return expr.attr in TRANSFORM_LEAVES
        if isinstance(expr, ast.Call):
            return self._may_name(expr.func)
        return isinstance(expr, ast.Name) and (
            expr.id in TRANSFORM_LEAVES
            or expr.id in self.aliases
            or expr.id in self.factories
            or expr.id in self._named_imports
            # Imported from the project: maybe (``transform_of`` reads that module when asked).
            or (self.ctx.project is not None and expr.id in self._project_imports)
        )

    @cached_property
    def _named_imports(self) -> frozenset[str]:
        """Bare names whose qualified name is a transform or `functools.partial`: a bare name's
        ``ctx.qualname`` is its binding, so this is that test for every name at once (it ran
        for nearly every call of a file)."""
        return frozenset(
            name
            for name, target in self.ctx._bindings.items()
            if isinstance(target, str) and canonical(target) in _NAMED
        )

    def _name(self, expr: ast.AST) -> str | None:
        if not isinstance(expr, (ast.Name, ast.Attribute)) or not self._may_name(expr):
            return None
        return canonical(self.ctx.qualname(expr))

    def _direct(self, expr: ast.AST) -> Transform | None:
        """`jax.jit`, `jax.jit(**options)` and `partial(jax.jit, **options)`, spelled out."""
        if isinstance(expr, ast.Call):
            head = self._name(expr.func)
            if head == PARTIAL and expr.args:
                inner = self._name(expr.args[0])
                if inner in TRANSFORMS and len(expr.args) == 1:
                    return Transform(inner, tuple(expr.keywords), "partial", _readable(expr.keywords))
                return None
            if head in TRANSFORMS and not expr.args:
                # `@jax.jit(static_argnums=0)`: JAX 0.8.1+; equinox and nnx take options this way too.
                return Transform(head, tuple(expr.keywords), "options", _readable(expr.keywords))
            return None
        name = self._name(expr)
        if name in TRANSFORMS:
            return Transform(name)
        return None

    def _names_transform(self, function: ast.FunctionDef) -> bool:
        """Whether the function's text names a transform at all: most module-level functions
        are not factories, and reading their text is much cheaper than walking them."""
        lengths = self._line_lengths
        if lengths is None:
            lines = self.ctx.lines[function.lineno - 1 : function.end_lineno]
            return _leaf_word().search("".join(lines)) is not None
        # The same lines, read in place (the characters around them are line breaks): line
        # i (from 0) starts after the i lines and line breaks before it.
        first, last = function.lineno - 1, min(function.end_lineno, len(lengths) - 1)
        return _leaf_word().search(self.ctx.text, lengths[first] + first, lengths[last] + last) is not None

    @cached_property
    def _line_lengths(self) -> list[int] | None:
        """For a text without carriage returns, the lengths of its first 0, 1, 2, ... lines
        without their line breaks (None with one: then the context's lines, split as the
        tokenizer splits them)."""
        text = self.ctx.text
        if "\r" in text:
            return None
        return list(accumulate(map(len, text.split("\n")), initial=0))

    def _factory(self, function: ast.FunctionDef) -> _Factory | None:
        found = []
        for node in _own_statements(function):
            if isinstance(node, ast.Return):
                # Some path returns something else (the plain function, say): no need to read
                # the rest (the walk gives the last statement first, most often that return).
                if (returned := self._returned(function, node.value)) is None:
                    return None
                found.append(returned)
        if not found:
            return None
        if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in _own_nodes(function)):
            return None  # a generator
        transforms = {(t.name, tuple(ast.dump(k) for k in t.options)) for t, _ in found}
        if len(transforms) != 1:
            return None
        returned = found[0][0]
        bare = any(takes for _, takes in found)
        called = any(not takes for _, takes in found)
        return _Factory(function, Transform(returned.name, returned.options, "factory", returned.readable), bare, called)

    def _returned(self, function: ast.FunctionDef, value: ast.AST | None) -> tuple[Transform, bool] | None:
        """(transform, whether it is applied to the factory's first parameter) for a return value."""
        if value is None:
            return None
        found = self._direct(value)
        if found is not None:
            return found, False
        params = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
        applied = self._applied_to(value, params[:1])
        if applied is not None:
            return applied, True
        if isinstance(value, ast.Lambda):
            inner = [a.arg for a in value.args.args]
            applied = self._applied_to(value.body, inner[:1]) if len(inner) == 1 else None
            return (applied, False) if applied is not None else None
        if isinstance(value, ast.Name):
            for statement in function.body:
                if isinstance(statement, ast.FunctionDef) and statement.name == value.id and not statement.decorator_list:
                    inner = [a.arg for a in (*statement.args.posonlyargs, *statement.args.args)]
                    body = [s for s in statement.body if not _is_docstring(s)]
                    if len(inner) == 1 and len(body) == 1 and isinstance(body[0], ast.Return):
                        applied = self._applied_to(body[0].value, inner)
                        return (applied, False) if applied is not None else None
        return None

    def _applied_to(self, value: ast.AST | None, names: list[str]) -> Transform | None:
        """`jax.jit(fn, **options)` applied to the one parameter in ``names``."""
        if not (
            names
            and isinstance(value, ast.Call)
            and len(value.args) == 1
            and isinstance(value.args[0], ast.Name)
            and value.args[0].id == names[0]
        ):
            return None
        name = self._name(value.func)
        if name not in JIT_LIKE:
            return None
        return Transform(name, tuple(value.keywords), "factory", True)

    def _substituted(self, factory: _Factory, call: ast.Call | None, skip_first: bool = False) -> Transform:
        """The factory's transform with its parameters replaced by the call's arguments."""
        function = factory.node
        args = function.args
        positional = [*args.posonlyargs, *args.args]
        if factory.bare:
            positional = positional[1:]
        values: dict[str, ast.AST] = {}
        defaults = args.defaults
        for arg, default in zip(positional[len(positional) - len(defaults) :], defaults):
            values[arg.arg] = default
        for arg, default in zip(args.kwonlyargs, args.kw_defaults):
            if default is not None:
                values[arg.arg] = default
        readable = True
        extra: list[ast.keyword] = []  # keywords the factory's **kwargs collects
        named = {a.arg for a in (*positional, *args.kwonlyargs)}
        if call is not None:
            given = call.args[1:] if skip_first else call.args
            if any(isinstance(a, ast.Starred) for a in given) or any(k.arg is None for k in call.keywords):
                readable = False
            if len(given) > len(positional):
                readable = False
            for arg, value in zip(positional, given):
                values[arg.arg] = value
            for keyword in call.keywords:
                if keyword.arg in named:
                    values[keyword.arg] = keyword.value
                elif keyword.arg is not None:
                    extra.append(keyword)
        if extra and args.kwarg is None:
            readable = False
        every = named
        options = []
        for keyword in factory.returned.options:
            value = keyword.value
            if keyword.arg is None:
                # `**kwargs` forwarded from the factory's own: the call's extra keywords.
                if args.kwarg is not None and isinstance(value, ast.Name) and value.id == args.kwarg.arg:
                    options.extend(extra)
                else:
                    readable = False
                continue
            if isinstance(value, ast.Name) and value.id in every:
                if value.id not in values:
                    readable = False
                    continue
                value = values[value.id]
            elif any(isinstance(n, ast.Name) and n.id in every for n in ast.walk(value)):
                readable = False
            options.append(ast.keyword(arg=keyword.arg, value=value))
        return Transform(factory.returned.name, tuple(options), "factory", readable)

    def _bound_more_than_once(self, name: str) -> bool:
        count = 0
        for statement in self.ctx.tree.body:
            if isinstance(statement, ast.Assign):
                count += any(isinstance(t, ast.Name) and t.id == name for t in statement.targets)
            elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                count += statement.name == name
        return count > 1


def _own_statements(function: ast.AST):
    """Statements of ``function``'s own body, nested blocks included, nested functions not."""
    stack = list(function.body)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            children = getattr(node, name, None)
            if isinstance(children, list):
                stack.extend(children)


def _own_nodes(function: ast.AST):
    """Nodes of ``function``'s own body (nested functions, lambdas and classes excluded)."""
    stack = list(function.body)
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))


def _readable(keywords) -> bool:
    return all(keyword.arg is not None for keyword in keywords)


def _is_docstring(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


# Which parameters a transform traces ---------------------------------------------------

EQUINOX_JIT = "equinox.filter_jit"


def traced_parameters(function, transform: Transform, bound: bool = False):
    """(traced, donated) parameter names of ``function`` under ``transform``, or None when its
    options cannot be read (then which arguments are static is unknown). ``bound``: reached as
    `self.method`, so its first parameter is not an argument. Static arguments
    (`static_argnums`/`static_argnames`, `static_broadcasted_argnums`), unmapped ones
    (`in_axes=None`), undifferentiated ones (`argnums`), filter_jit's non-array defaults and a
    linen transform's Module are not traced."""
    if not transform.readable:
        return None
    options = transform.options
    positional = positional_params(function)
    everything = {arg.arg for arg in all_params(function)}
    if (bound or transform.name in MODULE_FIRST) and positional:
        everything.discard(positional[0])  # `self` or the linen Module: not an array argument
        positional = positional[1:]
    params = positional
    if transform.name == EQUINOX_JIT:
        # Non-array arguments are static under filter_jit: those with a constant default.
        static = _constant_defaulted(function)
        donated = _equinox_donated(options, positional, everything)
        if donated is None:
            return None
        return frozenset(everything - static), frozenset(donated)
    if transform.jit_like:
        static = _argument_names(options, "static_argnums", "static_argnames", params)
        if static is not None and function.args.vararg and _indexes_past(options, "static_argnums", params):
            static.add(function.args.vararg.arg)  # some of *args are static: treat them all so
        donated = _argument_names(options, "donate_argnums", "donate_argnames", params)
        if static is None or donated is None:
            return None
        return frozenset(everything - static), frozenset(donated)
    if transform.name not in OTHER_TRANSFORMS:
        return None
    traced = _transformed_params(transform.name, options, params, everything)
    return None if traced is None else (traced, frozenset())


def _constant_defaulted(function) -> set[str]:
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    pairs = list(zip(positional[len(positional) - len(args.defaults) :], args.defaults))
    pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
    return {
        arg.arg
        for arg, default in pairs
        if isinstance(default, ast.Constant) and isinstance(default.value, (bool, int, float, str))
    }


def _equinox_donated(options, positional: list[str], everything: set[str]) -> set[str] | None:
    """`eqx.filter_jit(donate="all")`: the donated arguments; None when not a literal."""
    value = next((k.value for k in options if k.arg == "donate"), None)
    if value is None:
        return set()
    if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
        return None
    if value.value == "all":
        return set(everything)
    if value.value == "all-except-first":
        return set(everything) - set(positional[:1])
    return set()


def _transformed_params(transform: str, options, params: list[str], everything: set[str]) -> frozenset | None:
    traced = _traced_positions(transform, options, params, everything)
    static = _argument_names(options, "static_argnums", "static_argnames", params)
    broadcast = _argument_names(options, "static_broadcasted_argnums", None, params)
    if traced is None or static is None or broadcast is None:
        return None
    return traced - static - broadcast


def _traced_positions(transform: str, options, params: list[str], everything: set[str]) -> frozenset | None:
    option = OTHER_TRANSFORMS[transform][1]
    value = next((k.value for k in options if k.arg == option), None) if option else None
    if any(k.arg is None for k in options):
        return None
    if value is None:
        if option == "argnums":
            return frozenset(params[:1])
        return frozenset(everything)
    if option == "argnums":
        positions = _int_literals(value)
        if positions is None:
            return None
        return frozenset(params[i] for i in positions if -len(params) <= i < len(params))
    # in_axes: an int maps every positional argument; a tuple/list maps them one by one.
    if isinstance(value, ast.Constant) and isinstance(value.value, int):
        return frozenset(everything)
    if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(params):
        return frozenset(
            name
            for name, axis in zip(params, value.elts)
            if not (isinstance(axis, ast.Constant) and axis.value is None)
        )
    return None


def _argument_names(options, nums_key: str, names_key: str | None, params: list[str]) -> set[str] | None:
    """The parameters named by an `*_argnums` / `*_argnames` pair; None when not literals."""
    names: set[str] = set()
    for keyword in options:
        if keyword.arg == nums_key:
            positions = _int_literals(keyword.value)
            if positions is None:
                return None
            names.update(params[i] for i in positions if -len(params) <= i < len(params))
        elif names_key is not None and keyword.arg == names_key:
            strings = _str_literals(keyword.value)
            if strings is None:
                return None
            names.update(strings)
    return names


def _indexes_past(options, key: str, params: list[str]) -> bool:
    keyword = next((k for k in options if k.arg == key), None)
    return keyword is not None and any(i >= len(params) for i in _int_literals(keyword.value) or ())


def _int_literals(value: ast.AST) -> list[int] | None:
    """The ints of `1`, `-1`, `(0, 2)` or `None`; None when they are not literals."""
    if isinstance(value, ast.Constant) and value.value is None:
        return []
    items = value.elts if isinstance(value, (ast.Tuple, ast.List)) else [value]
    out = []
    for item in items:
        sign = 1
        if isinstance(item, ast.UnaryOp) and isinstance(item.op, ast.USub):
            sign, item = -1, item.operand
        if not (isinstance(item, ast.Constant) and type(item.value) is int):
            return None
        out.append(sign * item.value)
    return out


def _str_literals(value: ast.AST) -> list[str] | None:
    if isinstance(value, ast.Constant) and value.value is None:
        return []
    items = value.elts if isinstance(value, (ast.Tuple, ast.List)) else [value]
    if not all(isinstance(i, ast.Constant) and isinstance(i.value, str) for i in items):
        return None
    return [i.value for i in items]


def positional_params(function) -> list[str]:
    return [a.arg for a in (*function.args.posonlyargs, *function.args.args)]


def all_params(function) -> list[ast.arg]:
    args = function.args
    extra = [a for a in (args.vararg, args.kwarg) if a is not None]
    return [*args.posonlyargs, *args.args, *args.kwonlyargs, *extra]




# A module's alias or factory spells a transform of a library it imports, or is imported from
# another module: a module whose text names none of those libraries, and does not import the
# name, defines neither (it is not parsed to be asked).
_LIBRARIES = sorted({n.split(".", 1)[0] for n in TRANSFORMS})
_LIBRARY_WORD = re.compile(r"\b(?:%s)\b" % "|".join(_LIBRARIES))
_IMPORT = re.compile(r"\bimport\b")
_IMPORT_PARENS = re.compile(r"\bimport\s*\(")
_WORD = re.compile(r"\w+")


def _may_spell(project, path: str, name: str) -> bool:
    """Whether the module at ``path`` may spell ``name`` as a transform: its text names a
    transform library, or ``import`` is followed by ``*`` or the word ``name`` on its line or
    within its parentheses."""
    if _WORD.fullmatch(name) is None:  # not one word: asked of the text itself
        return _imports_spelling(project.text(path), name)
    names_library, imported = project.about(path, _spelling_facts)
    return names_library or "*" in imported or name in imported


def _spelled_names(ctx: FileContext) -> frozenset[str]:
    """The names a module's spellings may answer for (``Spellings._imported``): its aliases,
    its decorator factories, and what it imports from its project (a re-export)."""
    theirs = spellings_of(ctx)
    return frozenset({*theirs.aliases, *theirs.factories, *theirs._project_imports})


def _spelling_facts(text: str) -> tuple[bool, frozenset[str]]:
    """What ``_may_spell`` asks of a module's text, read once per content (a module that many
    names are imported from was scanned again for each): whether it names a transform library,
    and the words after ``import`` on its line or within ``import (...)`` (``*`` for a star).
    Being among those words is what ``_imports_spelling``'s pattern asks of a one-word name: the
    text after a whole word ``import`` starts with no word character, so its runs of word
    characters are whole words."""
    if any(True for library in _LIBRARIES for _ in _matches(_LIBRARY_WORD, library, text)):
        return True, frozenset()
    words: set[str] = set()
    for found in _matches(_IMPORT, "import", text):
        end = text.find("\n", found.end())
        line = text[found.end() : end if end >= 0 else len(text)]
        words.update(_WORD.findall(line))
        if "*" in line:
            words.add("*")
    for found in _matches(_IMPORT_PARENS, "import", text):
        end = text.find(")", found.end())
        words.update(_WORD.findall(text[found.end() : end if end >= 0 else len(text)]))
    return False, frozenset(words)


def _matches(pattern: re.Pattern[str], word: str, text: str):
    """``pattern.finditer(text)`` for a pattern whose every match starts with ``word`` and none
    overlaps another: found with ``str.find``, since a pattern that opens with ``\\b`` is tried
    at every position of the text (for a module of 680 kB, 30 ms a pattern)."""
    at = text.find(word)
    while at >= 0:
        found = pattern.match(text, at)  # `\b` there still sees the character before `at`
        if found is not None:
            yield found
        at = text.find(word, at + 1)


def _imports_spelling(text: str, name: str) -> bool:
    if _LIBRARY_WORD.search(text):
        return True
    return re.search(rf"\bimport\b[^\n]*(?:\*|\b{re.escape(name)}\b)|\bimport\s*\([^)]*\b{re.escape(name)}\b", text) is not None
