"""Placements (``values.Analysis``): where an array lives, from what places it: ``jax.device_put``
(of a tree, through a ``partial``), shardings, meshes and partition specs, a computation on
arrays (placed like its operands), explicit-sharding mode (``jax.set_mesh``) and a
multi-process job (``jax.distributed.initialize()``)."""

from __future__ import annotations

import ast
from dataclasses import replace

from jax_codemod.analysis import api
from jax_codemod.analysis.values_facts import (
    _MESH_MAKERS,
    SHARDING_TYPES,
    _argument,
    _is_none,
    _is_partial_put,
)
from jax_codemod.analysis.values_lattice import (
    ARRAY,
    ARRAY_KINDS,
    CONSTANT,
    CONTAINER,
    CUPY,
    DEVICE,
    INSTANCE,
    LIBRARY,
    MAPPING,
    MESH,
    MULTI,
    NOT_ADDRESSABLE,
    NUMPY,
    OTHER_ARRAYS,
    PARTITION_SPEC,
    PLACEMENT_UNKNOWN,
    SHARDING,
    SINGLE,
    TORCH,
    TRACER,
    UNKNOWN,
    UNKNOWN_VALUE,
    Value,
)

# Creation without array arguments: on the default device (or, in explicit mode, the mesh).
CREATION = api.members(creates="shape")
MESH_CONTEXTS = frozenset({"jax.set_mesh"})


def _constant_ints(node: ast.AST | None) -> list[int] | None:
    if node is None:
        return []
    elements = node.elts if isinstance(node, (ast.Tuple, ast.List)) else [node]
    found = []
    for element in elements:
        if not (isinstance(element, ast.Constant) and isinstance(element.value, int)):
            return None
        found.append(element.value)
    return found
_DTYPE_POSITIONS = {
    "jax.lax.convert_element_type": 1,
    "jax.lax._convert_element_type": 1,
    "jax.lax.bitcast_convert_type": 1,
    "jax.numpy.astype": 1,
}
_DTYPE_KEYWORDS = frozenset({"dtype", "new_dtype"})


def _placement_free(value: Value) -> bool:
    """Host data, literals, dtypes and other libraries' arrays: values that cannot carry a
    sharding (issue 31: `jnp.array(cupy_array)` lands on one device, as from NumPy)."""
    if value.kind in (CONTAINER, MAPPING):
        return all(_placement_free(v) for _, v in value.items)
    return value.kind in (CONSTANT, LIBRARY) or value.kind in OTHER_ARRAYS


def _keyword_name(call: ast.Call, value: ast.AST) -> str:
    return next((k.arg for k in call.keywords if k.value is value), "device")


def _one_device(devices: ast.AST | None) -> bool:
    """``jax.devices()[:1]``, ``[jax.devices()[0]]`` or ``np.array(...)`` of either: a mesh's one device."""
    if isinstance(devices, ast.Call) and devices.args and getattr(devices.func, "attr", None) in ("array", "asarray"):
        devices = devices.args[0]
    if isinstance(devices, (ast.List, ast.Tuple)):
        return len(devices.elts) == 1 and not isinstance(devices.elts[0], ast.Starred)
    if isinstance(devices, ast.Subscript) and isinstance(devices.slice, ast.Slice):
        window = devices.slice
        start = window.lower.value if isinstance(window.lower, ast.Constant) else (0 if window.lower is None else None)
        stop = window.upper.value if isinstance(window.upper, ast.Constant) else None
        return window.step is None and isinstance(start, int) and isinstance(stop, int) and stop - start == 1
    return False


class Placements:
    """Where an array lives: shardings, meshes, ``device_put`` and computations."""

    @property
    def multi_process(self) -> bool:
        """The file starts a multi-process job (``jax.distributed.initialize()``)."""
        if self._multi_process is None:
            self._multi_process = "initialize" in self.ctx.text and any(
                self.qualname(call.func) == "jax.distributed.initialize" for call in self._initialize_calls()
            )
        return self._multi_process

    def _initialize_calls(self) -> list[ast.Call]:
        """The calls of a name or attribute ``initialize``, in ``ast.walk``'s order: the call
        index's lists when one of them is empty (each is in that order), else one walk."""
        uses = self._uses("initialize")
        if not uses["func"] or not uses["method"]:
            return uses["func"] or uses["method"]
        return [
            node
            for node in self.nodes
            if isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", None)) == "initialize"
        ]

    def in_explicit_mesh(self, node: ast.AST) -> bool:
        """``node`` runs with a mesh set (``with jax.set_mesh(mesh):``, or ``jax.set_mesh(mesh)``
        called at module level before it), so JAX's creation results live on the mesh."""
        for ancestor in self.ctx.ancestors(node):
            if isinstance(ancestor, (ast.With, ast.AsyncWith)) and any(
                isinstance(item.context_expr, ast.Call)
                and self.qualname(item.context_expr.func) in MESH_CONTEXTS
                for item in ancestor.items
            ):
                return True
        if self._mesh_statements is None:
            self._mesh_statements = [
                statement
                for statement in self.ctx.tree.body
                if isinstance(statement, ast.Expr)
                and isinstance(statement.value, ast.Call)
                and "set_mesh" in ast.dump(statement.value.func)
                and self.qualname(statement.value.func) in MESH_CONTEXTS
            ]
        return any(
            statement.lineno < node.lineno or self.ctx.enclosing_function(node) is not None
            for statement in self._mesh_statements
        )

    def _combined(self, operands: list[ast.AST], expr: ast.AST) -> Value:
        return self._combine([self.value_of(o) for o in operands], expr)

    def _combine(self, values: list[Value], expr: ast.AST) -> Value:
        """An operator's result (``a + b``, ``x += y``) from its operands' values."""
        kinds = {v.kind for v in values}
        if TRACER in kinds and not kinds & OTHER_ARRAYS:
            return Value(TRACER, "a traced computation")
        for kind in (TORCH, CUPY):
            if kind in kinds:
                return Value(kind, values[[v.kind for v in values].index(kind)].why)
        arrays = [v for v in values if v.kind == ARRAY]
        if arrays:
            return self._placed_like(arrays, values, "an array computation", expr)
        if kinds == {NUMPY} or kinds == {NUMPY, CONSTANT}:
            return Value(NUMPY, values[0].why)
        if kinds == {CONSTANT}:
            return Value(CONSTANT)
        return UNKNOWN_VALUE

    def _placed_like(self, arrays: list[Value], values: list[Value], why: str, node: ast.AST) -> Value:
        """A computation on arrays: multi-device if one is, single-device if all are."""
        multi = next((v for v in arrays if v.placement in (MULTI, NOT_ADDRESSABLE)), None)
        if multi is not None:
            return Value(ARRAY, multi.why, placement=multi.placement)
        if self.in_explicit_mesh(node):
            return Value(ARRAY, "a computation under `jax.set_mesh`", placement=MULTI)
        if all(v.placement == SINGLE or _placement_free(v) for v in values):
            return Value(ARRAY, arrays[0].why if arrays else why, placement=SINGLE)
        return Value(ARRAY, next((v.why for v in arrays if v.why), why))

    def _sharding_placement(self, value: Value) -> str:
        if value.kind in (SHARDING, DEVICE):
            return value.placement
        if value.kind == PARTITION_SPEC:
            return MULTI
        return PLACEMENT_UNKNOWN

    def _placement_object(self, qualified: str, call: ast.Call) -> Value | None:
        """A sharding, a partition spec or a mesh that ``call`` of ``qualified`` makes."""
        label = f"`{qualified}`"
        if qualified in SHARDING_TYPES:
            placement = SHARDING_TYPES[qualified]
            label = f"a `{qualified.rsplit('.', 1)[1]}`"
            if placement == MULTI and self.value_of(_argument(call, 0, "mesh")).constant == "single":
                return Value(SHARDING, f"{label} over a one-device mesh", placement=SINGLE)
            if placement == MULTI and self.multi_process and not self._local_mesh(call):
                # After jax.distributed.initialize, a mesh over jax.devices() spans every process.
                return Value(
                    SHARDING, f"{label} over the devices of every process", placement=NOT_ADDRESSABLE
                )
            return Value(SHARDING, label, placement=placement)
        if qualified == "jax.sharding.PartitionSpec":
            return Value(PARTITION_SPEC, "a `PartitionSpec`")
        if qualified in _MESH_MAKERS:
            shape = (
                _constant_ints(_argument(call, 0, "axis_shapes")) if qualified == "jax.make_mesh" else None
            )
            if (shape and all(size == 1 for size in shape)) or (
                qualified == "jax.sharding.Mesh" and _one_device(_argument(call, 0, "devices"))
            ):
                return Value(MESH, f"{label} of one device", constant="single")
            local = "local_devices" in self.ctx.source_of(call)
            return Value(MESH, label, constant="local" if local else None)
        return None

    def _local_mesh(self, call: ast.Call) -> bool:
        """A sharding over this process's devices only (a mesh of ``jax.local_devices()``)."""
        mesh = _argument(call, 0, "mesh")
        return "local_devices" in self.ctx.source_of(call) or self.value_of(mesh).constant == "local"

    def _computed(self, qualified: str, call: ast.Call) -> Value:
        label = f"`{qualified}`"
        out = _argument(call, None, "out_sharding") or _argument(call, None, "device") or _argument(
            call, None, "sharding"
        )
        if out is not None and not _is_none(out):
            placed = self.value_of(out)
            placement = self._sharding_placement(placed)
            if placement != PLACEMENT_UNKNOWN:
                return Value(ARRAY, f"{label} with `{_keyword_name(call, out)}=`", placement=placement)
        # A dtype argument (`lax.convert_element_type(x, dtype)`) carries no placement, whatever
        # the file knows of it.
        dtype_at = _DTYPE_POSITIONS.get(qualified)
        arguments = [
            self.value_of(a)
            for a in [
                *(a for i, a in enumerate(call.args) if i != dtype_at),
                *(k.value for k in call.keywords if k.arg not in _DTYPE_KEYWORDS),
            ]
        ]
        if any(v.kind == TRACER for v in arguments):
            return Value(TRACER, "a traced computation")
        arrays = [v for v in arguments if v.kind == ARRAY]
        member = qualified.rsplit(".", 1)[1]
        if not arrays and member in CREATION:
            if self.in_explicit_mesh(call):
                return Value(ARRAY, f"{label} under `jax.set_mesh`", placement=MULTI)
            return Value(ARRAY, label, placement=SINGLE)
        result = self._placed_like(arrays, arguments, label, call)
        return result if result.placement == MULTI else replace(result, why=label)

    def _device_put(self, call: ast.Call) -> Value:
        """``jax.device_put(x, device)``, or a ``partial(jax.device_put, ...)`` alias called."""
        data, target = self._put_arguments(call)
        return self._put(data, target)

    def _put_arguments(self, call: ast.Call) -> tuple[Value, Value | None]:
        """What ``call`` passes ``jax.device_put`` for ``x`` and ``device`` (None: nothing, or
        None). ``put = functools.partial(jax.device_put, device=sharding)`` binds some of them
        ahead: ``put(x)`` is called with the partial's arguments first (its keywords overridden
        by the call's), each read in the module that spells it. ``src=`` is where the data comes
        from, not where it goes: it places nothing."""
        bound = self.value_of(call.func)
        partial = bound.node if _is_partial_put(bound) else None
        holder = self._owner(bound) if partial is not None else self
        if holder is None:
            return UNKNOWN_VALUE, UNKNOWN_VALUE
        positional = [(holder, a) for a in partial.args[1:]] if partial is not None else []
        positional += [(self, a) for a in call.args]
        keywords = {k.arg: (holder, k.value) for k in partial.keywords} if partial is not None else {}
        keywords.update((k.arg, (self, k.value)) for k in call.keywords)
        if None in keywords or any(isinstance(a, ast.Starred) for _, a in positional[:2]):
            return UNKNOWN_VALUE, UNKNOWN_VALUE  # `*args`, `**options`: which is which is unknown

        def read(position: int, keyword: str) -> Value | None:
            found = keywords.get(keyword) or (positional[position] if len(positional) > position else None)
            if found is None:
                return None
            analysis, node = found
            return analysis.arrived(analysis.value_of(node), self)

        data, target = read(0, "x"), read(1, "device")
        if target is not None and target.kind == CONSTANT and target.constant is None:
            target = None
        return data or UNKNOWN_VALUE, target

    def _put(self, data: Value, target: Value | None) -> Value:
        """What ``jax.device_put`` makes of ``data`` sent to ``target``. A tree (a dict, a tuple,
        a record) comes back as the same tree, each leaf placed by the matching leaf of a tree
        of shardings (``device_put({"x": a, "y": b}, {"x": s, "y": t})``) or by one sharding for
        all: the leaf under a single-device sharding is no sharded array. A tracer stays one."""
        if data.kind == TRACER:
            return data
        if data.kind in (CONTAINER, MAPPING, INSTANCE) and not (target is None and _placement_free(data)):
            tree = target is not None and target.kind in (CONTAINER, MAPPING, INSTANCE)
            items = tuple(
                (key, self._put(leaf, target.element(key) if tree else target)) for key, leaf in data.items
            )
            return replace(data, items=items)
        if data.kind == UNKNOWN and target is not None and target.kind in (CONTAINER, MAPPING, INSTANCE):
            # The shardings' tree is a prefix of the data's (else device_put raises), so what
            # comes back has its shape whatever the data: `put(batch, {"x": rows})["x"]` is
            # placed by `rows`.
            return replace(target, items=tuple((key, self._put(data, leaf)) for key, leaf in target.items))
        if target is None:
            if data.kind in ARRAY_KINDS:
                return data if data.placement != PLACEMENT_UNKNOWN else Value(ARRAY, "`jax.device_put`")
            if data.kind in (NUMPY, CONSTANT, CONTAINER):
                return Value(ARRAY, "`jax.device_put` of host data", placement=SINGLE)
            return Value(ARRAY, "`jax.device_put`")
        placement = self._sharding_placement(target)
        if target.kind == DEVICE:
            return Value(ARRAY, "`jax.device_put` to one device", placement=SINGLE)
        if placement == MULTI:
            return Value(ARRAY, "`jax.device_put` with a multi-device sharding", placement=MULTI)
        if placement == SINGLE:
            why = "`jax.device_put` with a single-device sharding"
            return Value(ARRAY, why, placement=SINGLE)
        if placement == NOT_ADDRESSABLE:
            return Value(
                ARRAY, "`jax.device_put` with a sharding over several processes", placement=NOT_ADDRESSABLE
            )
        return Value(ARRAY, "`jax.device_put`")
