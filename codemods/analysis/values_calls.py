"""Calls and returns (``values.Analysis``): what calling a value gives (a function of the project,
a transformed function, a class, a transform applied to a function), what a function returns
or yields, the same read with one call's arguments (``specialized``), and what a method of a
value returns (``.__dlpack__()``, an array's, a dict's, a record's ``replace``)."""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import TYPE_CHECKING

from jax_codemod.analysis import api
from jax_codemod.analysis.scopes import scope_nodes
from jax_codemod.analysis.transforms import Transform
from jax_codemod.analysis.values_facts import _is_none
from jax_codemod.analysis.values_lattice import (
    ARRAY,
    ARRAY_KINDS,
    CALLABLE,
    CAPSULE,
    CLASS,
    CONSTANT,
    CONTAINER,
    CUPY,
    DEVICE,
    DLPACK_DEVICE,
    FUNCTION,
    INSTANCE,
    LIBRARY,
    MAPPING,
    MESH,
    MULTI,
    NOT_ADDRESSABLE,
    NUMPY,
    OTHER_ARRAYS,
    PLACEMENT_UNKNOWN,
    SHARDING,
    SINGLE,
    TORCH,
    TRACER,
    TRANSFORM,
    UNKNOWN,
    UNKNOWN_VALUE,
    Value,
    _keyed,
    _shaped,
    _TooDeep,
    join,
    join_paths,
)

if TYPE_CHECKING:
    from jax_codemod.analysis.values import Analysis


JIT_TRANSFORMS = api.public_names(library="jax", transform="jit")
MULTI_TRANSFORMS = api.public_names(transform=True, multi_device=True)
# Methods and attributes of an array that return an array placed like the receiver.
ARRAY_METHODS = frozenset(
    {
        "astype",
        "reshape",
        "transpose",
        "ravel",
        "flatten",
        "squeeze",
        "swapaxes",
        "copy",
        "sum",
        "mean",
        "max",
        "min",
        "prod",
        "clip",
        "round",
        "conj",
        "block_until_ready",
        "view",
        "cumsum",
        "__getitem__",
    }
)
# How many calls deep a function of another module is read with a call's arguments
# (``Analysis._returned_for``): a helper's helper, not a recursion through modules.
MAX_SPECIALIZED = 3
_SPECIALIZING = [0]  # how deep this process is in such readings now
# The helper JAX002/JAX006 insert: what it returns is known, whatever the file defines it as.
GATHER_HELPER = "ensure_single_device"


# Builtins that step through an iterable (`next(batches())`), unless the file rebinds them.
_ITERATION_BUILTINS = frozenset({"next", "iter"})


def _array_leaves(tree: Value, leaf: Value, depth: int) -> Value:
    """``tree`` with each of its arrays and tracers, however nested, ``leaf``; the rest kept."""
    if tree.kind in ARRAY_KINDS:
        return leaf
    if tree.kind not in (CONTAINER, MAPPING, INSTANCE) or depth > 8:
        return tree
    return replace(tree, items=tuple((key, _array_leaves(value, leaf, depth + 1)) for key, value in tree.items))


def call_arguments(call: ast.Call, function: ast.AST, bound: bool = False) -> list[tuple[ast.expr, ast.arg]]:
    """(argument, parameter) for each argument ``call`` passes to ``function``'s parameters, by
    position (after the first, when ``bound``) and by keyword; nothing after a ``*args``."""
    arguments = function.args
    positional = [*arguments.posonlyargs, *arguments.args][1 if bound else 0 :]
    pairs = []
    for parameter, argument in zip(positional, call.args):
        if isinstance(argument, ast.Starred):
            break
        pairs.append((argument, parameter))
    by_name = {a.arg: a for a in [*arguments.args, *arguments.kwonlyargs]}
    pairs += [(k.value, by_name[k.arg]) for k in call.keywords if k.arg in by_name]
    return pairs


class Calls:
    """What a call gives: the callee's returns, placed by its arguments and its transform."""

    def returns_of(self, function: ast.AST) -> Value:
        """What calling ``function`` (a def or lambda of this file) returns, joined over its returns."""
        if function in self._returns:
            return self._returns[function]
        self._returns[function] = UNKNOWN_VALUE  # recursion
        try:
            result = self._returned(function)
        except _TooDeep:
            del self._returns[function]  # the placeholder is no answer once the question is cut
            raise
        self._returns[function] = result
        return result

    def _returned(self, function: ast.AST) -> Value:
        """``returns_of``'s answer, computed (``returns_of`` memoizes it)."""
        if isinstance(function, ast.Lambda):
            result = self.value_of(function.body)
        else:
            statements = [node for node in scope_nodes(function) if isinstance(node, ast.Return) and node.value is not None]
            returns = [node.value for node in statements]
            generator = any(isinstance(node, (ast.Yield, ast.YieldFrom)) for node in scope_nodes(function))
            if generator:
                returns = []
            result = self._generated(function) if generator else join_paths(self.value_of(v) for v in returns)
            if result.placement in (MULTI, NOT_ADDRESSABLE) and self._guarded_return(function, statements):
                # `if len(x.sharding.device_set) <= 1: return x`: which return runs depends on
                # what it returns (``_inspects``), so the weaker claim.
                result = join(self.value_of(v) for v in returns)
            if result.why and result.kind != UNKNOWN:
                result = replace(result, why=f"`{function.name}()`, which returns {result.why}")
            elif (
                result.kind == UNKNOWN
                and function.returns is not None
                and isinstance(function, ast.FunctionDef)  # an async def returns a coroutine
                and not generator
            ):
                # What the body does not show, the signature may: `def policy(obs) -> jax.Array`.
                annotated = self.annotation_value(function.returns)
                if annotated.kind != UNKNOWN:
                    source = self.ctx.source_of(function.returns)
                    result = replace(annotated, why=f"`{function.name}()`, annotated `-> {source}`")
        return result

    def _generated(self, function: ast.AST) -> Value:
        """What calling a generator (or async generator) function gives: a generator whose
        elements are what it yields, joined (``yield from`` an iterable: its elements), so
        ``for batch in batches():``, ``async for`` and ``next(batches())`` see them."""
        yielded = []
        for node in scope_nodes(function):
            if isinstance(node, ast.Yield):
                yielded.append(self.value_of(node.value) if node.value is not None else Value(CONSTANT))
            elif isinstance(node, ast.YieldFrom):
                yielded.append(self.iterated(node.value))
        element = join_paths(yielded)
        if element.why and element.kind != UNKNOWN:
            element = replace(element, why=f"`{function.name}()`, which yields {element.why}")
        return Value(CONTAINER, items=((None, element),))


    def _call_value(self, call: ast.Call) -> Value:
        func = call.func
        qualified = self.qualname(func)
        # The helper as the fixes write it: defined in the file, or imported from `helper-module`
        # (`from proj.interop import ensure_single_device`), so a rule that runs after JAX002's
        # fix sees the same array whichever way the helper is provided.
        if (isinstance(func, ast.Name) and func.id == GATHER_HELPER and len(call.args) == 1
                and (qualified is None or qualified.endswith("." + GATHER_HELPER))):
            gathered = self.value_of(call.args[0])
            if gathered.kind == ARRAY and gathered.placement != NOT_ADDRESSABLE:
                return Value(ARRAY, f"`{GATHER_HELPER}`", placement=SINGLE)
            return gathered
        if qualified is not None:
            found = self._library_call(qualified, call)
            if found is not None:
                return found
            return self.apply(self._qualified_value(qualified), call)
        if isinstance(func, ast.Name) and func.id in _ITERATION_BUILTINS and self._builtin(func):
            return self._iteration_call(func.id, call)
        if isinstance(func, ast.Attribute):
            receiver = self.value_of(func.value)
            found = self._method_value(receiver, func.attr, call)
            if found is not None:
                return found
        return self.apply(self.value_of(func), call)

    def _caches(self, decorator: ast.AST) -> bool:
        """`@functools.cache`, `@functools.lru_cache`, `@functools.lru_cache(maxsize=...)`: the
        function returns what its body returns."""
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        return self.qualname(target) in ("functools.cache", "functools.lru_cache")

    def decorator_name(self, decorator: ast.AST) -> str | None:
        """A decorator's qualified name, a builtin's (`staticmethod`) included."""
        if isinstance(decorator, ast.Name) and decorator.id in ("staticmethod", "classmethod", "property"):
            return decorator.id if self._builtin(decorator) else self.qualname(decorator)
        return self.qualname(decorator)

    def _builtin(self, name: ast.Name) -> bool:
        """``name`` reads the builtin of its spelling: the file binds it in no scope it sees."""
        ident = name.id
        return (
            not self.ctx.is_bound(ident)
            and ident not in self.scopes.definitions(self.ctx.tree)
            and not self.scopes.bound_locally(ident, name)
        )

    def _iteration_call(self, builtin: str, call: ast.Call) -> Value:
        """``next(it)``: one element of ``it`` (a default joins in); ``iter(x)``: an iterator
        over ``x``'s elements (a dict's: its keys). ``next(batches())`` is a yielded batch."""
        if not call.args or len(call.args) > 2 or call.keywords or isinstance(call.args[0], ast.Starred):
            return UNKNOWN_VALUE
        element = self.iterated(call.args[0])
        if builtin == "iter":
            return Value(CONTAINER, items=((None, element),)) if len(call.args) == 1 else UNKNOWN_VALUE
        return join_paths([element, *(self.value_of(a) for a in call.args[1:])])

    def apply(self, callee: Value, call: ast.Call) -> Value:
        """What calling ``callee`` as ``call`` returns."""
        kind = callee.kind
        if kind == TRANSFORM:
            transform = callee.transform
            if call.args and not isinstance(call.args[0], ast.Starred):
                wrapped = self.value_of(call.args[0])
                function = wrapped.node if wrapped.kind in (FUNCTION, CALLABLE) else None
                inner = wrapped.transform if wrapped.kind == CALLABLE else None
                result = self._callable(transform.with_options(call.keywords, function), function)
                if (
                    inner is not None
                    and result.transform.name in JIT_TRANSFORMS
                    and inner.name in MULTI_TRANSFORMS
                ):
                    return replace(result, transform=replace(result.transform, name=inner.name))
                return result
            return Value(TRANSFORM, callee.why, transform=transform.with_options(call.keywords))
        owner = self._owner(callee)
        if owner is None:
            return UNKNOWN_VALUE
        if kind == CALLABLE:
            return self._transformed_result(callee.transform, call, owner)
        if kind == FUNCTION and callee.node is not None:
            returned = owner.arrived(owner.returns_of(callee.node), self, callee.node.lineno)
            if owner is not self and (returned.kind == UNKNOWN or returned.placement == PLACEMENT_UNKNOWN and returned.kind in ARRAY_KINDS):
                returned = self._returned_for(callee, call) or returned
            if returned.kind == TRANSFORM and returned.transform.has_unknown_options:
                return replace(returned, transform=self._forwarded(returned.transform, callee.node, call))
            return returned
        if kind == CLASS and callee.node is not None:
            return owner.arrived(owner._instance(callee.node, call, self), self)
        if kind == LIBRARY and callee.qualname is not None and callee.owner is not None:
            # A library function another module binds to a name (`put_rows = partial(jax.device_put,
            # device=rows)`, `asarray = np.asarray`), called here: that call, as its qualified name says.
            return self._library_call(callee.qualname, call) or UNKNOWN_VALUE
        return UNKNOWN_VALUE

    def _returned_for(self, callee: Value, call: ast.Call) -> Value | None:
        """What a function of another module returns for this call's arguments, where what it
        returns for any caller is not known (`def place(x, sharding): return jax.device_put(x,
        sharding)`, called here with a NamedSharding): its returns, read with the parameters this
        call passes arrays or placements to bound to them (``specialized``). None when that says
        no more."""
        if not isinstance(call.func, (ast.Name, ast.Attribute)) or _SPECIALIZING[0] >= MAX_SPECIALIZED:
            return None
        found = self._function_callee(call.func, callee)
        if found is None:
            return None
        owner, function, bound = found
        bindings = {}
        for argument, parameter in call_arguments(call, function, bound):
            value = self.value_of(argument)
            if self._leaves(value).kind in ARRAY_KINDS | OTHER_ARRAYS | {SHARDING, DEVICE, MESH}:
                bindings[parameter] = self.arrived(value, owner)
        if not bindings:
            return None
        _SPECIALIZING[0] += 1
        try:
            returned = owner.specialized(bindings).returns_of(function)
        finally:
            _SPECIALIZING[0] -= 1
        return owner.arrived(returned, self, function.lineno) if returned.kind != UNKNOWN else None

    def _forwarded(self, transform: Transform, factory: ast.AST, call: ast.Call) -> Transform:
        """A decorator factory's ``partial(jax.jit, **options)``: the call's keywords fill ``**options``."""
        kwarg = getattr(getattr(factory, "args", None), "kwarg", None)
        options = []
        for keyword in transform.options:
            spread = keyword.arg is None and isinstance(keyword.value, ast.Name)
            if spread and kwarg is not None and keyword.value.id == kwarg.arg:
                options.extend(call.keywords)
            else:
                options.append(keyword)
        return replace(transform, options=tuple(options))

    def _transformed_result(self, transform: Transform, call: ast.Call, owner: Analysis | None = None) -> Value:
        """What calling a transformed function gives: placed by its arguments (this file's) and
        by its options and returns (``owner``'s, the module that defines it)."""
        owner = owner or self
        name = transform.name
        label = f"a `{name}` function"
        if transform.function is not None and getattr(transform.function, "name", None):
            label = f"`{transform.function.name}`, a `{name}` function"
        if name in MULTI_TRANSFORMS:
            return self._mapped_result(transform, owner, Value(ARRAY, label, placement=MULTI))
        arguments = [self.value_of(a) for a in [*call.args, *(k.value for k in call.keywords)]]
        if any(v.kind == TRACER for v in arguments):
            return Value(TRACER, "a traced computation")
        returned = owner.returns_of(transform.function) if transform.function is not None else UNKNOWN_VALUE
        function = transform.function
        returned = owner.arrived(returned, self, getattr(function, "lineno", None))
        if name in JIT_TRANSFORMS:
            out = transform.option("out_shardings")
            if out is None:
                out = transform.option("out_axis_resources")  # pjit's name before JAX 0.4.x
            if out is not None and not _is_none(out):
                placed = owner.arrived(owner.value_of(out), self)
                return self._shaped_like(returned, placed, f"{label} with `out_shardings`")
        if returned.kind in ARRAY_KINDS and returned.placement == MULTI and returned.why:
            return Value(ARRAY, f"{label}, which returns {returned.why}", placement=MULTI)
        arrays = [v for v in arguments if v.kind == ARRAY]
        if returned.kind in (CONTAINER, MAPPING):
            # `w, metrics = step(w, batch)`, then `metrics["logits"]`: every array the call
            # returns, however nested, is placed like its arguments (a jit of a sharded batch
            # puts even a returned scalar on the batch's devices), and is no tracer out here.
            leaf = self._placed_like(arrays or [Value(ARRAY)], arguments, label, call)
            return Value(returned.kind, items=_array_leaves(returned, leaf, 0).items)
        result = self._placed_like(arrays, arguments, label, call)
        if result.placement != MULTI and returned.kind in OTHER_ARRAYS | {CONSTANT}:
            return UNKNOWN_VALUE
        return replace(result, why=label) if result.placement != MULTI else result

    def _mapped_result(self, transform: Transform, owner: Analysis, leaf: Value) -> Value:
        """A ``jax.pmap`` or ``shard_map`` function's result: each output leaf is ``leaf`` (an
        array over the mapped devices), in the tree the function returns when that holds a dict
        or a record, so ``out.items()``, ``out.values()`` and ``out.field`` hold them. Tuples
        and lists alone stay ``leaf``: indexing, unpacking and iterating an array give it too,
        and a function that returns it keeps its name in the reason (``forward()``, which
        returns...)."""
        function = transform.function
        if function is None:
            return leaf
        returned = owner.arrived(owner.returns_of(function), self, getattr(function, "lineno", None))
        return _shaped(returned, leaf, 0) if _keyed(returned, 0) else leaf

    def _shaped_like(self, returned: Value, placed: Value, why: str) -> Value:
        """Results placed by ``out_shardings`` (a sharding, or a tuple/dict of them)."""
        if placed.kind in (CONTAINER, MAPPING):
            if returned.kind == placed.kind:
                items = []
                for key, value in returned.items:
                    sharding = placed.element(key)
                    items.append((key, self._placed_by(sharding, why) if True else value))
                return Value(returned.kind, items=tuple(items))
            return (
                join(self._placed_by(v, why) for _, v in placed.items) if placed.items else Value(ARRAY, why)
            )
        placed_value = self._placed_by(placed, why)
        if returned.kind in (CONTAINER, MAPPING):
            return Value(returned.kind, items=tuple((k, placed_value) for k, _ in returned.items))
        return placed_value

    def _placed_by(self, sharding: Value, why: str) -> Value:
        placement = self._sharding_placement(sharding)
        if placement == PLACEMENT_UNKNOWN:
            return Value(ARRAY, why)
        return Value(ARRAY, why if placement != SINGLE else sharding.why or why, placement=placement)

    def _method_value(self, receiver: Value, method: str, call: ast.Call) -> Value | None:
        kind = receiver.kind
        if method == "__dlpack__":
            producer = {ARRAY: "jax", TRACER: "jax", TORCH: "torch", CUPY: "cupy", NUMPY: "numpy"}.get(kind)
            if producer is None:
                producer = "parameter" if self._is_parameter(call.func.value) else "unknown"
            return Value(
                CAPSULE,
                f"`.__dlpack__()` of {receiver.why or 'a value'}",
                placement=receiver.placement,
                producer=producer,
            )
        if method == "toDlpack":
            return Value(CAPSULE, "CuPy's `.toDlpack()`", producer="cupy")
        if method == "__dlpack_device__":
            return Value(DLPACK_DEVICE, node=call.func.value)
        if kind in ARRAY_KINDS:
            if method == "addressable_data":
                return Value(ARRAY, "`.addressable_data()`", placement=SINGLE)
            if method in ARRAY_METHODS:
                return receiver
            if method in ("tolist", "item", "unsafe_buffer_pointer", "devices", "__array__"):
                return UNKNOWN_VALUE
            return UNKNOWN_VALUE
        if kind == TORCH:
            if method in ("numpy", "tolist", "item", "data_ptr", "size", "dim", "stride", "element_size"):
                return Value(NUMPY, receiver.why) if method == "numpy" else UNKNOWN_VALUE
            return receiver
        if kind in (NUMPY, CUPY):
            return receiver if method in ARRAY_METHODS else UNKNOWN_VALUE
        if kind == MAPPING:
            if method == "items":
                return Value(
                    CONTAINER,
                    items=tuple(
                        (None, Value(CONTAINER, items=((0, Value(CONSTANT, constant=k)), (1, v))))
                        for k, v in receiver.items
                    ),
                )
            if method == "values":
                return Value(CONTAINER, items=tuple((None, v) for _, v in receiver.items))
            if method in ("get", "pop", "setdefault") and call.args:
                key = call.args[0]
                return receiver.element(key.value if isinstance(key, ast.Constant) else None)
            if method == "copy":
                return receiver
            return None
        if kind == CONTAINER and method == "copy":
            return receiver
        if kind == CALLABLE and method in ("lower", "compile"):
            return receiver  # AOT: jax.jit(f, ...).lower(x).compile() runs like jax.jit(f, ...)
        if kind == SHARDING and method in ("reshape", "replicate", "with_memory_kind", "update"):
            return receiver
        if kind in (INSTANCE, CLASS):
            value = self.attribute_of(receiver, method)
            if value.kind in (FUNCTION, CALLABLE, TRANSFORM, CLASS):
                return self.apply(value, call)
            if kind == INSTANCE and method in ("_replace", "replace") and self._replaces(receiver, method):
                return self._replaced(receiver, call)
            return None
        return None

    def _replaces(self, instance: Value, method: str) -> bool:
        """Whether ``method`` of ``instance`` is its record class's copy with fields changed, which
        the class does not define itself: a NamedTuple's `_replace`, a flax struct's or chex
        dataclass's `replace`."""
        owner = self._owner(instance)
        cls = instance.node
        if owner is None or not isinstance(cls, ast.ClassDef) or owner._record_fields(cls) is None:
            return False
        if method == "_replace":
            return True
        spelled = {owner.qualname(d.func if isinstance(d, ast.Call) else d) for d in cls.decorator_list}
        spelled |= {owner.qualname(base) for base in cls.bases}
        return bool(spelled & {"flax.struct.dataclass", "flax.struct.PyTreeNode", "chex.dataclass"})

    def _replaced(self, instance: Value, call: ast.Call) -> Value:
        """`dataclasses.replace(state, params=p)`, `pair._replace(b=x)`, `state.replace(params=p)`:
        the instance with those fields changed (changes spread from a mapping are unknown)."""
        if instance.kind != INSTANCE or any(k.arg is None for k in call.keywords):
            return UNKNOWN_VALUE
        changed = {k.arg: self.value_of(k.value) for k in call.keywords}
        kept = tuple((key, value) for key, value in instance.items if key not in changed)
        return replace(instance, items=kept + tuple(changed.items()))
