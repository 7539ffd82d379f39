"""Shared by JAX002 and JAX006: where a JAX array leaves through DLPack or a raw pointer,
what is known about the devices it spans, and the `ensure_single_device` fix.

An export site hands one expression to a single-device interface. Each exported value is
given an origin: how much the file tells about its sharding, from the assignments that
reach it in its scope, the producer calls behind them (`jax.device_put` with a
`NamedSharding`, `jax.pmap`, `shard_map`, `jit(..., out_shardings=...)`, ...), parameter
annotations and `isinstance` narrowing. JAX002 fixes the values known to span several
devices; JAX006 the JAX arrays whose sharding the file cannot know.
"""

from __future__ import annotations

import ast
import bisect
import re
import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

import libcst as cst
from jax_codemod.analysis.context import FileContext
from jax_codemod.engine.fixer import Fixer, insert_after_preamble
from jax_codemod.rule import Finding, FixSafety, Rule
from jax_codemod.rules._shared import (
    ARRAY_ATTRIBUTES,
    ARRAY_METHODS,
    COMPREHENSIONS,
    FUNCTIONS,
    TRY_STAR,
    alone_on_its_lines,
    in_try_body,
)

HELPER = "ensure_single_device"
HELPER_MODULE_OPTION = "helper-module"

# Consumers that take an object speaking the array protocol and ask it for one buffer.
CONSUMERS = frozenset(
    {
        "torch.from_dlpack",
        "torch.utils.dlpack.from_dlpack",
        "numpy.from_dlpack",
        "cupy.from_dlpack",
        "tensorflow.experimental.dlpack.from_dlpack",
        "jax.numpy.from_dlpack",
        "jax.dlpack.from_dlpack",
    }
)
DLPACK_METHODS = frozenset({"__dlpack__", "__dlpack_device__"})
# A raw pointer does not keep the buffer alive: the gathered copy must outlive the statement.
POINTER_METHODS = frozenset({"unsafe_buffer_pointer"})
POINTER_ATTRIBUTES = frozenset({"__cuda_array_interface__"})

# Origins, ordered so that `min` combines the definitions that may reach a use.
UNKNOWN, SINGLE, JAX, MULTI = range(4)

MULTI_PRODUCERS = frozenset(
    {
        "jax.device_put_sharded",
        "jax.device_put_replicated",
        "jax.make_array_from_callback",
        "jax.make_array_from_single_device_arrays",
        "jax.make_array_from_process_local_data",
        "jax.lax.with_sharding_constraint",
        "jax.reshard",
        "jax.sharding.reshard",
    }
)
MULTI_SHARDINGS = frozenset(
    {
        "jax.sharding.NamedSharding",
        "jax.NamedSharding",
        "jax.sharding.PositionalSharding",
        "jax.sharding.PmapSharding",
        "jax.sharding.GSPMDSharding",
    }
)
SHARDING_TYPES = MULTI_SHARDINGS | {"jax.sharding.Sharding"}
MULTI_TRANSFORMS = frozenset({"jax.pmap", "jax.shard_map", "jax.experimental.shard_map.shard_map"})
JIT_TRANSFORMS = frozenset({"jax.jit", "jax.experimental.pjit.pjit"})
SHARDING_KEYWORDS = ("out_shardings", "in_shardings")
PARTIAL = frozenset({"functools.partial"})
JAX_ARRAY_TYPES = frozenset({"jax.Array", "jax.numpy.ndarray", "jax.core.Array"})
# Modules whose functions return arrays placed like their array arguments.
ARRAY_MODULES = ("jax.numpy.", "jax.lax.", "jax.nn.", "jax.scipy.", "jax.random.", "jax.image.")
# ...except these, which return something else (dtypes, shapes, host data, functions).
NOT_ARRAYS = frozenset(
    {
        "jax.numpy.dtype",
        "jax.numpy.finfo",
        "jax.numpy.iinfo",
        "jax.numpy.shape",
        "jax.numpy.ndim",
        "jax.numpy.size",
        "jax.numpy.issubdtype",
        "jax.numpy.result_type",
        "jax.numpy.promote_types",
        "jax.numpy.can_cast",
        "jax.numpy.isdtype",
        "jax.numpy.vectorize",
        "jax.numpy.from_dlpack",
    }
)
# Single-device placement of an array without arguments that carry a sharding.
CREATION = frozenset(
    {
        "arange",
        "zeros",
        "ones",
        "empty",
        "full",
        "eye",
        "identity",
        "linspace",
        "logspace",
        "geomspace",
        "tri",
    }
)
SINGLE_METHODS = frozenset({"addressable_data"})
# ArrayOrigins does not follow `view` yet: adding it there would change JAX003/JAX004
# findings without a test that asks for it.
_FOLLOWED_METHODS = ARRAY_METHODS | {"view"}
# Mentioning these on the exported value, or in a condition around the export, is a guard.
GUARD_ATTRIBUTES = frozenset(
    {
        "sharding",
        "device_set",
        "is_fully_addressable",
        "is_fully_replicated",
        "addressable_data",
        "addressable_shards",
        "platform",
        "devices",
        "device_count",
        "local_device_count",
        "default_backend",
        "process_count",
    }
)
GUARD_EXCEPTIONS = {
    "dlpack": frozenset({"BufferError"}),
    "pointer": frozenset(
        {"RuntimeError", "ValueError", "JaxRuntimeError", "XlaRuntimeError", "AttributeError"}
    ),
}
BROAD_EXCEPTIONS = frozenset({"Exception", "BaseException"})
WRAPPABLE = {
    "Name": "Name",
    "Attribute": "Attribute",
    "Call": "Call",
    "Subscript": "Subscript",
    "BinOp": "BinaryOperation",
    "UnaryOp": "UnaryOperation",
}
MAX_DEPTH = 12

# How a finding is fixed; carried in Finding.data.
WRAP = "wrap"  # x -> ensure_single_device(x), inside the export
REBIND = "rebind"  # x = ensure_single_device(x) before the statement (raw pointers)

HELPER_SOURCE = f'''def {HELPER}(x):
    """Gather a multi-device JAX array onto one of its own devices (added by codemod).

    DLPack and raw buffer pointers describe one device's memory. The lowest-id device of
    the array's own sharding is used, so no copy crosses backends; anything that is not
    a multi-device JAX array is returned unchanged.
    """
    devices = getattr(getattr(x, "sharding", None), "device_set", None)
    if devices is None or len(devices) <= 1:
        return x
    import jax

    return jax.device_put(x, min(devices, key=lambda device: device.id))
'''


@dataclass(frozen=True)
class Origin:
    level: int
    why: str = ""


NO_ORIGIN = Origin(UNKNOWN)


@dataclass(frozen=True)
class Export:
    value: ast.expr  # the array handed over
    site: ast.AST  # the consumer call, method call or attribute
    via: str  # how it is handed over, for messages
    pointer: bool
    forbids_copy: bool

    @property
    def error(self) -> str:
        """What the export raises for a multi-device array on current JAX."""
        if not self.pointer:
            return "BufferError"
        return "AttributeError" if self.via == "`.__cuda_array_interface__`" else "JaxRuntimeError"


_EXPORT_WORD = re.compile(r"dlpack|unsafe_buffer_pointer|__cuda_array_interface__")
# `from numpy import from_dlpack as to_host`: a consumer spelled without the word.
_CONSUMER_ALIAS = re.compile(r"\bfrom_dlpack\s+as\s+(\w+)")


def _export_lines(text: str) -> list[int]:
    """Lines that may hold an export, so that only the statements around them are walked."""
    words = _EXPORT_WORD.pattern
    aliases = set(_CONSUMER_ALIAS.findall(text))
    if aliases:
        words += "|" + "|".join(rf"\b{re.escape(alias)}\b" for alias in sorted(aliases))
    numbers: list[int] = []
    line, counted = 1, 0
    for match in re.finditer(words, text):
        line += FileContext.count_line_breaks(text, counted, match.start())
        counted = match.start()
        if not numbers or numbers[-1] != line:
            numbers.append(line)
    return numbers


def _nodes_near(tree: ast.Module, lines: list[int]) -> Iterator[ast.AST]:
    """Every node whose source span includes one of ``lines`` (sorted), or that has no span."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            start = getattr(child, "lineno", None)
            if start is not None:
                index = bisect.bisect_left(lines, start)
                if index == len(lines) or lines[index] > child.end_lineno:
                    continue
            stack.append(child)


def find_exports(ctx: FileContext) -> Iterator[Export]:
    lines = _export_lines(ctx.text)
    for node in _nodes_near(ctx.tree, lines) if lines else ():
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in DLPACK_METHODS | POINTER_METHODS:
                yield Export(
                    func.value, node, f"`.{func.attr}()`", func.attr in POINTER_METHODS, _forbids_copy(node)
                )
            elif (
                node.args
                and not isinstance(node.args[0], ast.Starred)
                and (isinstance(func, ast.Name) or getattr(func, "attr", None) == "from_dlpack")
            ):
                qualified = ctx.qualname(func)
                if qualified in CONSUMERS:
                    yield Export(node.args[0], node, f"`{qualified}`", False, _forbids_copy(node))
        elif (
            isinstance(node, ast.Attribute)
            and node.attr in POINTER_ATTRIBUTES
            and isinstance(node.ctx, ast.Load)
        ):
            yield Export(node.value, node, f"`.{node.attr}`", True, False)


def _forbids_copy(call: ast.Call) -> bool:
    return any(
        k.arg == "copy" and isinstance(k.value, ast.Constant) and k.value.value is False
        for k in call.keywords
    )


# Scopes and the definitions in them ----------------------------------------------------

# Scopes, for name resolution; a comprehension runs inline in the scope that holds it.
_SCOPES = (*FUNCTIONS, *COMPREHENSIONS, ast.Module)
_BLOCKS = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.Match)
_ALWAYS_BEFORE = (0, 0)


@dataclass(frozen=True)
class Definition:
    node: ast.AST  # the binding statement or expression
    value: ast.expr | None  # what it binds; None: something this analysis cannot follow
    bound_at: tuple[int, int]  # uses from here on see it


def _scope_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """Nodes that run in ``scope`` itself, not in functions, classes or comprehensions in it."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (*_SCOPES, ast.ClassDef)):
            continue
        stack.extend(ast.iter_child_nodes(node))


def _bound_names(target: ast.AST) -> Iterator[ast.Name]:
    if isinstance(target, ast.Name):
        yield target
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _bound_names(element.value if isinstance(element, ast.Starred) else element)


def _end(node: ast.AST) -> tuple[int, int]:
    return (node.end_lineno, node.end_col_offset)


def _definitions(scope: ast.AST) -> dict[str, list[Definition]]:
    found: dict[str, list[Definition]] = {}

    def add(name: str, node: ast.AST, value: ast.expr | None, bound_at: tuple[int, int]) -> None:
        found.setdefault(name, []).append(Definition(node, value, bound_at))

    for node in _scope_nodes(scope):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                for name in _bound_names(target):
                    add(name.id, node, node.value, _end(node))
        elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and isinstance(node.target, ast.Name):
            if node.value is not None:
                add(node.target.id, node, node.value, _end(node))
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            for name in _bound_names(node.target):
                add(name.id, node, None, _end(node.target))
        elif isinstance(node, ast.comprehension):
            for name in _bound_names(node.target):
                add(name.id, node, None, _ALWAYS_BEFORE)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                for name in _bound_names(item.optional_vars) if item.optional_vars else ():
                    add(name.id, node, None, _end(item.optional_vars))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            add(node.name, node, None, _end(node))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                add((alias.asname or alias.name).split(".", 1)[0], node, None, _end(node))
        elif isinstance(node, ast.ExceptHandler) and node.name:
            add(node.name, node, None, (node.lineno, node.col_offset))
    for definitions in found.values():
        definitions.sort(key=lambda d: d.bound_at)
    return found


def _parameters(scope: ast.AST) -> list[ast.arg]:
    if not isinstance(scope, FUNCTIONS):
        return []
    arguments = scope.args
    extra = [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
    return [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, *extra]


class Analysis:
    """What one file says about the arrays it exports; shared by the rules that ask."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self._definitions: dict[ast.AST, dict[str, list[Definition]]] = {}
        self._active: set[int] = set()

    @cached_property
    def exports(self) -> list[Export]:
        return list(find_exports(self.ctx))

    # Scopes ------------------------------------------------------------------------------

    def scope_of(self, node: ast.AST) -> ast.AST:
        for ancestor in self.ctx.ancestors(node):
            if isinstance(ancestor, _SCOPES):
                return ancestor
        return self.ctx.tree

    def definitions(self, scope: ast.AST) -> dict[str, list[Definition]]:
        if scope not in self._definitions:
            self._definitions[scope] = _definitions(scope)
        return self._definitions[scope]

    def _unconditional(self, node: ast.AST, use: ast.AST, scope: ast.AST) -> bool:
        """``node`` runs whenever ``use`` does: no branch holds it that does not hold ``use``."""
        use_ancestors = set(self.ctx.ancestors(use))
        for ancestor in self.ctx.ancestors(node):
            if ancestor is scope:
                return True
            if (
                isinstance(ancestor, (*_BLOCKS, TRY_STAR, ast.IfExp, ast.BoolOp))
                and ancestor not in use_ancestors
            ):
                return False
        return True

    # Origins -----------------------------------------------------------------------------

    def origin(self, expr: ast.AST, depth: int = 0) -> Origin:
        if depth > MAX_DEPTH or id(expr) in self._active:
            return NO_ORIGIN
        self._active.add(id(expr))
        try:
            return self._origin(expr, depth + 1)
        finally:
            self._active.discard(id(expr))

    def _origin(self, expr: ast.AST, depth: int) -> Origin:
        if isinstance(expr, ast.Name):
            return self._name_origin(expr, depth)
        if isinstance(expr, ast.Call):
            return self._call_origin(expr, depth)
        if isinstance(expr, ast.Subscript):
            return self.origin(expr.value, depth)
        if isinstance(expr, ast.Attribute) and expr.attr in ARRAY_ATTRIBUTES:
            return self.origin(expr.value, depth)
        if isinstance(expr, ast.BinOp):
            left, right = self.origin(expr.left, depth), self.origin(expr.right, depth)
            return (
                max(left, right, key=lambda o: o.level) if max(left.level, right.level) >= JAX else NO_ORIGIN
            )
        if isinstance(expr, ast.UnaryOp):
            return self.origin(expr.operand, depth)
        if isinstance(expr, ast.NamedExpr):
            return self.origin(expr.value, depth)
        return NO_ORIGIN

    def _call_origin(self, call: ast.Call, depth: int) -> Origin:
        func = call.func
        if isinstance(func, ast.Name) and func.id == HELPER:
            return Origin(SINGLE, f"`{HELPER}`")
        if isinstance(func, ast.Attribute) and self.ctx.qualname(func) is None:
            if func.attr in SINGLE_METHODS:
                return Origin(SINGLE, f"`.{func.attr}()`")
            if func.attr in _FOLLOWED_METHODS:
                return self.origin(func.value, depth)
        qualified = self.ctx.qualname(func)
        if qualified == "jax.device_put":
            return self._device_put_origin(call, depth)
        if qualified in MULTI_PRODUCERS:
            return Origin(MULTI, f"`{qualified}`")
        if qualified and qualified.startswith(ARRAY_MODULES) and qualified not in NOT_ARRAYS:
            return self._computed_origin(
                f"`{qualified}`", call, depth, qualified.rsplit(".", 1)[1] in CREATION
            )
        transform = self.callable_origin(func, depth)
        if transform.level == JAX:
            # A jitted function places its results like its arguments.
            return self._computed_origin(transform.why, call, depth)
        return transform if transform.level == MULTI else NO_ORIGIN

    def _device_put_origin(self, call: ast.Call, depth: int) -> Origin:
        target = call.args[1] if len(call.args) > 1 else _keyword(call, "device")
        if target is None:
            if not call.args or self._placement_free(call.args[0]):
                return Origin(SINGLE, "`jax.device_put` of host data")
            data = self.origin(call.args[0], depth)
            return data if data.level >= SINGLE else Origin(JAX, "`jax.device_put`")
        if self.is_multi_sharding(target, depth):
            return Origin(MULTI, "`jax.device_put` with a multi-device sharding")
        if self._is_device(target, depth):
            return Origin(SINGLE, "`jax.device_put` to one device")
        return Origin(JAX, "`jax.device_put`")

    def _computed_origin(self, label: str, call: ast.Call, depth: int, creation: bool = False) -> Origin:
        """A computation's result: multi-device if an argument is, single-device if all are."""
        arguments = [*call.args, *(k.value for k in call.keywords)]
        origins = [self.origin(argument, depth) for argument in arguments]
        best = max(origins, key=lambda o: o.level, default=NO_ORIGIN)
        if best.level == MULTI:
            return best
        if creation or all(
            origin.level == SINGLE or self._placement_free(argument)
            for argument, origin in zip(arguments, origins, strict=True)
        ):
            return Origin(SINGLE, label)
        return Origin(JAX, label)

    def _placement_free(self, argument: ast.AST) -> bool:
        """Host data, literals and dtypes: arguments that cannot carry a sharding."""
        if isinstance(argument, ast.Constant):
            return True
        if isinstance(argument, (ast.List, ast.Tuple)):
            return all(self._placement_free(element) for element in argument.elts)
        if isinstance(argument, ast.Call):
            return (self.ctx.qualname(argument.func) or "").startswith("numpy.")
        return isinstance(argument, ast.Attribute) and (self.ctx.qualname(argument) or "").startswith(
            ("numpy.", "jax.numpy.")
        )

    def is_multi_sharding(self, expr: ast.AST, depth: int) -> bool:
        if isinstance(expr, ast.Call):
            func = expr.func
            if self.ctx.qualname(func) in MULTI_SHARDINGS:
                return True
            # PositionalSharding(devices).reshape(...) / .replicate()
            return isinstance(func, ast.Attribute) and self.is_multi_sharding(func.value, depth + 1)
        if isinstance(expr, ast.Name) and depth < MAX_DEPTH:
            if self._annotation_in(expr, SHARDING_TYPES):
                return True
            values = self._reaching_values(expr)
            return bool(values) and all(
                v is not None and self.is_multi_sharding(v, depth + 1) for v in values
            )
        return False

    def _is_device(self, expr: ast.AST, depth: int) -> bool:
        if isinstance(expr, ast.Subscript):
            return self.ctx.qualname(getattr(expr.value, "func", None) or expr.value) in {
                "jax.devices",
                "jax.local_devices",
            }
        if isinstance(expr, ast.Call):
            return self.ctx.qualname(expr.func) == "jax.sharding.SingleDeviceSharding"
        if isinstance(expr, ast.Name) and depth < MAX_DEPTH:
            values = self._reaching_values(expr)
            return bool(values) and all(v is not None and self._is_device(v, depth + 1) for v in values)
        return False

    def callable_origin(self, func: ast.AST, depth: int) -> Origin:
        """What calling ``func`` returns: MULTI for pmapped/shard_mapped/sharded-jit callables."""
        if depth > MAX_DEPTH:
            return NO_ORIGIN
        if isinstance(func, ast.Call):
            return self._transform_origin(func.func, func.args, func.keywords, depth + 1)
        if isinstance(func, ast.Name):
            scope = self.scope_of(func)
            for candidate in (scope, self.ctx.tree):
                definitions = self.definitions(candidate).get(func.id)
                if definitions:
                    return self._callable_definitions_origin(definitions, depth + 1)
        return NO_ORIGIN

    def _callable_definitions_origin(self, definitions: list[Definition], depth: int) -> Origin:
        origins = []
        for definition in definitions:
            node = definition.node
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                origins.append(self._function_origin(node, depth))
            elif definition.value is not None:
                origins.append(self.callable_origin(definition.value, depth))
            else:
                return NO_ORIGIN
        return min(origins, key=lambda o: o.level)

    def _function_origin(self, function: ast.FunctionDef, depth: int) -> Origin:
        for decorator in reversed(function.decorator_list):
            if isinstance(decorator, ast.Call):
                origin = self._transform_origin(
                    decorator.func, decorator.args, decorator.keywords, depth, decorated=True
                )
            else:
                origin = self._transform_origin(decorator, [], [], depth, decorated=True)
            if origin.level >= JAX:
                return origin
        if function.decorator_list:
            return NO_ORIGIN
        returns = [
            node for node in _scope_nodes(function) if isinstance(node, ast.Return) and node.value is not None
        ]
        if not returns:
            return NO_ORIGIN
        origins = [self.origin(node.value, depth) for node in returns]
        weakest = min(origins, key=lambda o: o.level)
        if weakest.level == MULTI:
            return Origin(MULTI, f"`{function.name}`, which returns {weakest.why}")
        return NO_ORIGIN

    def _transform_origin(self, func, args, keywords, depth: int, decorated: bool = False) -> Origin:
        qualified = self.ctx.qualname(func)
        if qualified in PARTIAL and args:
            return self._transform_origin(args[0], args[1:], keywords, depth, decorated=True)
        if qualified in MULTI_TRANSFORMS:
            return Origin(MULTI, f"a `{qualified}` function")
        if qualified in JIT_TRANSFORMS:
            for keyword in keywords:
                value = keyword.value
                if keyword.arg in SHARDING_KEYWORDS and not (
                    _is_none(value) or self._is_device(value, depth)
                ):
                    return Origin(MULTI, f"a `{qualified}` function with `{keyword.arg}`")
            if args and not decorated:
                wrapped = self.callable_origin(args[0], depth + 1)
                if wrapped.level == MULTI:
                    return wrapped
            return Origin(JAX, f"a `{qualified}` function")
        return NO_ORIGIN

    # Names -------------------------------------------------------------------------------

    def _reaching(self, ident: str, use: ast.AST, scope: ast.AST) -> tuple[list[Definition], bool]:
        """Definitions in ``scope`` that may reach ``use``, latest first; and whether one always does."""
        reaching: list[Definition] = []
        start = (use.lineno, use.col_offset)
        for definition in reversed(self.definitions(scope).get(ident, [])):
            if definition.bound_at > start or (
                definition.value is not None and _contains(definition.node, use)
            ):
                continue
            reaching.append(definition)
            if self._unconditional(definition.node, use, scope):
                return reaching, True
        return reaching, False

    def _reaching_values(self, name: ast.Name) -> list[ast.expr | None]:
        """What ``name`` may hold, when every possibility is an assignment this file shows."""
        scope = self.scope_of(name)
        reaching, complete = self._reaching(name.id, name, scope)
        if reaching and complete:
            return [d.value for d in reaching]
        if not reaching and scope is not self.ctx.tree and not self._parameter(name.id, scope):
            return [d.value for d in self.definitions(self.ctx.tree).get(name.id, [])]
        return []

    def _name_origin(self, name: ast.Name, depth: int) -> Origin:
        scope = self.scope_of(name)
        found = self._origin_in(name.id, name, scope, depth)
        # The check narrows the value it saw, so only a name its scope never reassigned before.
        if (
            found.level == UNKNOWN
            and not self._reaching(name.id, name, scope)[0]
            and self._narrowed_to_jax(name)
        ):
            return Origin(JAX, "an `isinstance` check")
        return found

    def _origin_in(self, ident: str, use: ast.AST, scope: ast.AST, depth: int) -> Origin:
        reaching, complete = self._reaching(ident, use, scope)
        origins = [self.origin(d.value, depth) if d.value is not None else NO_ORIGIN for d in reaching]
        if not complete:
            origins.append(self._entry_origin(ident, scope, depth))
        return min(origins, key=lambda o: o.level)

    def _entry_origin(self, ident: str, scope: ast.AST, depth: int) -> Origin:
        """The origin of ``ident`` before ``scope`` assigns it: a parameter or an outer name."""
        parameter = self._parameter(ident, scope)
        if parameter is not None:
            if parameter in (scope.args.vararg, scope.args.kwarg):
                return NO_ORIGIN  # a tuple or dict of what the annotation names
            if parameter.annotation is not None and self._is_type(parameter.annotation, JAX_ARRAY_TYPES):
                return Origin(JAX, "a parameter annotated as a JAX array")
            if self._registered_for_jax(parameter, scope):
                return Origin(JAX, "a function registered for `jax.Array`")
            return NO_ORIGIN
        if scope is self.ctx.tree or depth > MAX_DEPTH:
            return NO_ORIGIN
        outer = self.scope_of(scope)
        if isinstance(scope, COMPREHENSIONS):
            # Runs inline: the outer scope's definitions up to the comprehension reach it.
            return self._origin_in(ident, scope, outer, depth + 1)
        # A function runs later: any definition of the enclosing scope may reach it.
        while True:
            definitions = self.definitions(outer).get(ident)
            if definitions or self._parameter(ident, outer) is not None:
                break
            if outer is self.ctx.tree:
                return NO_ORIGIN
            outer = self.scope_of(outer)
        if not definitions or self._parameter(ident, outer) is not None:
            return NO_ORIGIN
        if any(d.value is None for d in definitions):
            return NO_ORIGIN
        return min((self.origin(d.value, depth + 1) for d in definitions), key=lambda o: o.level)

    def _parameter(self, ident: str, scope: ast.AST) -> ast.arg | None:
        return next((a for a in _parameters(scope) if a.arg == ident), None)

    def _annotation_in(self, name: ast.Name, types: frozenset[str]) -> bool:
        parameter = self._parameter(name.id, self.scope_of(name))
        return (
            parameter is not None
            and parameter.annotation is not None
            and self._is_type(parameter.annotation, types)
        )

    def _is_type(self, annotation: ast.expr, types: frozenset[str]) -> bool:
        """``annotation`` is one of ``types``, or Optional of one."""
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            try:
                annotation = ast.parse(annotation.value, mode="eval").body
            except SyntaxError:
                return False
        if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
            members = [annotation.left, annotation.right]
            return any(self._is_type(m, types) for m in members) and all(
                _is_none(m) or self._is_type(m, types) for m in members
            )
        if isinstance(annotation, ast.Subscript) and self.ctx.qualname(annotation.value) == "typing.Optional":
            return self._is_type(annotation.slice, types)
        return self.ctx.qualname(annotation) in types

    def _registered_for_jax(self, parameter: ast.arg, function: ast.AST) -> bool:
        """The first parameter of ``@dispatcher.register(jax.Array)``."""
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return False
        positional = [*function.args.posonlyargs, *function.args.args]
        if not positional or positional[0] is not parameter:
            return False
        return any(
            isinstance(d, ast.Call)
            and isinstance(d.func, ast.Attribute)
            and d.func.attr == "register"
            and len(d.args) == 1
            and self._is_type(d.args[0], JAX_ARRAY_TYPES)
            for d in function.decorator_list
        )

    def _isinstance_jax(self, test: ast.AST, name: str, negated: bool = False) -> bool:
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return self._isinstance_jax(test.operand, name, not negated)
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or if negated else ast.And):
            return any(self._isinstance_jax(value, name, negated) for value in test.values)
        if negated:
            return False
        return (
            isinstance(test, ast.Call)
            and isinstance(test.func, ast.Name)
            and test.func.id == "isinstance"
            and len(test.args) == 2
            and isinstance(test.args[0], ast.Name)
            and test.args[0].id == name
            and self._is_type(test.args[1], JAX_ARRAY_TYPES)
        )

    def _narrowed_to_jax(self, name: ast.Name) -> bool:
        """An ``isinstance(name, jax.Array)`` branch, or an early exit unless it holds."""
        scope = self.scope_of(name)
        child: ast.AST = name
        for ancestor in self.ctx.ancestors(name):
            if isinstance(ancestor, (ast.If, ast.IfExp, ast.While)) and child is not ancestor.test:
                in_body = (
                    child in ancestor.body if isinstance(ancestor.body, list) else child is ancestor.body
                )
                if self._isinstance_jax(ancestor.test, name.id, negated=not in_body):
                    return True
            for block in _blocks_holding(ancestor, child):
                for statement in block[: block.index(child)]:
                    if (
                        isinstance(statement, ast.If)
                        and not statement.orelse
                        and statement.body
                        and isinstance(statement.body[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break))
                        and self._isinstance_jax(statement.test, name.id, negated=True)
                    ):
                        return True
            if ancestor is scope:
                return False
            child = ancestor
        return False

    # Guards ------------------------------------------------------------------------------

    def is_guarded(self, export: Export) -> bool:
        scope = self.scope_of(export.site)
        while isinstance(scope, COMPREHENSIONS):
            scope = self.scope_of(scope)
        exceptions = GUARD_EXCEPTIONS["pointer" if export.pointer else "dlpack"] | BROAD_EXCEPTIONS
        child: ast.AST = export.site
        for ancestor in self.ctx.ancestors(export.site):
            if ancestor is scope:
                break
            if isinstance(ancestor, (ast.If, ast.IfExp, ast.While, ast.Assert)) and _mentions_guard(
                ancestor.test
            ):
                return True
            if in_try_body(ancestor, child) and any(
                self._catches(handler, exceptions) for handler in ancestor.handlers
            ):
                return True
            child = ancestor
        if isinstance(export.value, ast.Name):
            return self._value_inspected(export.value.id, scope)
        return False

    def _catches(self, handler: ast.ExceptHandler, exceptions: frozenset[str]) -> bool:
        if handler.type is None:
            return True
        types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        for caught in types:
            spelled = self.ctx.qualname(caught) or (caught.id if isinstance(caught, ast.Name) else None)
            if spelled and spelled.rsplit(".", 1)[-1] in exceptions:
                return True
        return False

    def _value_inspected(self, name: str, scope: ast.AST) -> bool:
        """The scope looks at the value's devices (``x.sharding``, ``x.is_fully_replicated``...)."""
        for node in _scope_nodes(scope):
            if (
                isinstance(node, ast.Attribute)
                and node.attr in GUARD_ATTRIBUTES
                and isinstance(node.value, ast.Name)
                and node.value.id == name
            ):
                return True
        return False


def _contains(outer: ast.AST, inner: ast.AST) -> bool:
    return (outer.lineno, outer.col_offset) <= (inner.lineno, inner.col_offset) and _end(inner) <= _end(outer)


def _blocks_holding(parent: ast.AST, child: ast.AST) -> Iterator[list]:
    for field in ("body", "orelse", "finalbody"):
        block = getattr(parent, field, None)
        if isinstance(block, list) and child in block:
            yield block


def _mentions_guard(test: ast.AST) -> bool:
    return any(isinstance(node, ast.Attribute) and node.attr in GUARD_ATTRIBUTES for node in ast.walk(test))


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _is_none(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


_ANALYSES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def analysis_for(ctx: FileContext) -> Analysis:
    """One analysis per file, however many rules ask."""
    found = _ANALYSES.get(ctx)
    if found is None:
        found = _ANALYSES[ctx] = Analysis(ctx)
    return found


# The rules ---------------------------------------------------------------------------------

_COMPOUND = (
    ast.If,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.Try,
    TRY_STAR,
    ast.With,
    ast.AsyncWith,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Match,
)


class GatherBeforeExport(Rule):
    """Finds exports whose origin is ``LEVEL`` and gathers the value with ``ensure_single_device``."""

    LEVEL: int
    WRAP_SAFETY: FixSafety
    TRIGGERS = (b"dlpack", b"unsafe_buffer_pointer", b"__cuda_array_interface__")

    def describe(self, source: str, origin: Origin, export: Export) -> str:
        raise NotImplementedError

    def check(self, ctx: FileContext) -> list[Finding]:
        analysis = analysis_for(ctx)
        findings = []
        for export in analysis.exports:
            origin = analysis.origin(export.value)
            if origin.level != self.LEVEL or analysis.is_guarded(export):
                continue
            findings.append(self._finding(ctx, analysis, export, origin))
        return findings

    def _finding(self, ctx: FileContext, analysis: Analysis, export: Export, origin: Origin) -> Finding:
        source = ctx.source_of(export.value)
        message = self.describe(source, origin, export)
        by_hand = f"gather it first with `jax.device_put({source}, jax.devices()[0])`"
        conflict = _helper_conflict(ctx, analysis, export)
        if conflict:
            return self._report(ctx, export, f"{message}; {by_hand} (no automatic fix: {conflict})")
        if export.forbids_copy:
            reason = "a gather is a copy, which `copy=False` forbids"
            return self._report(ctx, export, f"{message}; {by_hand} and drop `copy=False` ({reason})")
        if export.pointer:
            return self._pointer_finding(ctx, analysis, export, message)
        node_type = WRAPPABLE.get(type(export.value).__name__)
        if node_type is None:
            return self._report(ctx, export, f"{message}; {by_hand} (no automatic fix for this expression)")
        fix = f"gather it first: `{HELPER}({source})`"
        return self.finding(ctx, export.value, f"{message}; {fix}", self.WRAP_SAFETY, node_type, (WRAP,))

    def _report(self, ctx: FileContext, export: Export, message: str) -> Finding:
        return self.finding(ctx, export.site, message, FixSafety.NONE)

    def _pointer_finding(self, ctx: FileContext, analysis: Analysis, export: Export, message: str) -> Finding:
        statement = ctx.enclosing_statement(export.site)
        value = export.value
        reason = _why_not_rebindable(ctx, analysis, statement, value)
        if reason is None:
            fix = f"gather it into the variable first, `{value.id} = {HELPER}({value.id})`, and keep it alive"
            return self.finding(
                ctx,
                statement,
                f"{message}; {fix} while the pointer is used",
                FixSafety.UNSAFE,
                "SimpleStatementLine",
                (REBIND, value.id),
            )
        advice = f"gather it by hand into a variable that outlives the pointer ({reason})"
        return self.finding(ctx, export.site, f"{message}; {advice}", FixSafety.NONE)

    def rewrite(self, original, updated, finding: Finding, fixer: Fixer):
        self._provide_helper(fixer)
        if finding.data[0] == WRAP:
            inner = updated.with_changes(lpar=[], rpar=[])
            return cst.Call(
                func=cst.Name(HELPER), args=[cst.Arg(inner)], lpar=updated.lpar, rpar=updated.rpar
            )
        name = finding.data[1]
        gather = cst.parse_statement(f"{name} = {HELPER}({name})\n").with_changes(
            leading_lines=updated.leading_lines
        )
        return cst.FlattenSentinel([gather, updated.with_changes(leading_lines=[])])

    def _provide_helper(self, fixer: Fixer) -> None:
        if _module_helper(fixer.ctx.tree) is not None:
            return
        module = self.options.get(HELPER_MODULE_OPTION)
        if module:
            fixer.add_import(module, HELPER)
        else:
            fixer.state[HELPER] = True

    def finalize(self, module: cst.Module, fixer: Fixer) -> cst.Module:
        if not fixer.state.get(HELPER) or any(
            isinstance(statement, cst.FunctionDef) and statement.name.value == HELPER
            for statement in module.body
        ):
            return module
        return insert_after_preamble(module, HELPER_SOURCE)


def _module_helper(tree: ast.Module) -> ast.AST | None:
    """The module-level definition or import of the helper, if the file has one."""
    for statement in tree.body:
        if (
            isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and statement.name == HELPER
        ):
            return statement
        if isinstance(statement, ast.ImportFrom) and any(
            (alias.asname or alias.name) == HELPER for alias in statement.names
        ):
            return statement
        targets = getattr(statement, "targets", None) or [getattr(statement, "target", None)]
        if isinstance(statement, (ast.Assign, ast.AnnAssign)) and any(
            name.id == HELPER for target in targets for name in _bound_names(target)
        ):
            return statement
    return None


def _helper_conflict(ctx: FileContext, analysis: Analysis, export: Export) -> str | None:
    """Why ``ensure_single_device`` cannot be used at ``export``, if it cannot."""
    if HELPER not in ctx.text:
        return None
    existing = _module_helper(ctx.tree)
    if existing is not None:
        if isinstance(existing, ast.ImportFrom):
            if any(alias.name != HELPER for alias in existing.names if alias.asname == HELPER):
                return f"`{HELPER}` is imported under that name from something else"
        elif not (
            isinstance(existing, ast.FunctionDef) and (existing.args.posonlyargs or existing.args.args)
        ):
            return f"the module defines a different `{HELPER}`"
        elif analysis.scope_of(export.site) is ctx.tree and existing.lineno > export.site.lineno:
            return f"the module defines `{HELPER}` only after this line"
    scope = analysis.scope_of(export.site)
    if scope is not ctx.tree and HELPER in analysis.definitions(scope):
        return f"`{HELPER}` is a local name here"
    if isinstance(scope, FUNCTIONS):
        arguments = scope.args
        every = (
            *arguments.posonlyargs,
            *arguments.args,
            *arguments.kwonlyargs,
            arguments.vararg,
            arguments.kwarg,
        )
        if any(argument is not None and argument.arg == HELPER for argument in every):
            return f"`{HELPER}` is a parameter here"
    return None


def _why_not_rebindable(
    ctx: FileContext, analysis: Analysis, statement: ast.stmt | None, value: ast.expr
) -> str | None:
    """Why ``value = ensure_single_device(value)`` cannot go on its own line before ``statement``."""
    if not isinstance(value, ast.Name):
        return "the pointer is taken from an expression, whose gathered copy would be freed at once"
    if isinstance(statement, ast.Return):
        return "the pointer is returned, and a local gathered copy is freed when the function returns"
    if statement is None or isinstance(statement, _COMPOUND):
        return "the export sits in a compound statement's header"
    if any(isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await)) for node in ast.walk(statement)):
        return "the statement suspends, so the pointer may outlive the gathered copy"
    targets = getattr(statement, "targets", None) or [getattr(statement, "target", None)]
    if any(name.id == value.id for target in targets if target for name in _bound_names(target)):
        return f"the statement rebinds `{value.id}`, which would drop the gathered copy"
    scope = analysis.scope_of(value)
    if analysis.scope_of(statement) is not scope:
        return "the export runs in a lambda or comprehension"
    if scope is not ctx.tree and not (
        analysis._parameter(value.id, scope) or value.id in analysis.definitions(scope)
    ):
        return f"rebinding `{value.id}` here would make the outer name local to the function"
    if not alone_on_its_lines(ctx, statement):
        return "the statement shares its line with another"
    return None
