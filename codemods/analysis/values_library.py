"""Library calls (``values.Analysis``): what a call of a library function known by its qualified
name gives: capsule producers, placed producers, NumPy, torch and CuPy results, pytree helpers
(maps, leaves, flattens), ``jax.lax.scan``'s carry, ``functools.partial``."""

from __future__ import annotations

import ast
from dataclasses import replace

from jax_codemod.analysis import api
from jax_codemod.analysis import transforms as spelled
from jax_codemod.analysis.values_facts import (
    _MESH_MAKERS,
    SHARDING_TYPES,
    TRACING_TRANSFORMS,
    _argument,
    _is_partial_put,
)
from jax_codemod.analysis.values_lattice import (
    ARRAY,
    ARRAY_KINDS,
    CALLABLE,
    CAPSULE,
    CONTAINER,
    CUPY,
    DEVICE,
    FUNCTION,
    INSTANCE,
    LIBRARY,
    MAPPING,
    MODULE,
    MULTI,
    NOT_ADDRESSABLE,
    NUMPY,
    OTHER_ARRAYS,
    PLACEMENT_UNKNOWN,
    SINGLE,
    TORCH,
    TRACER,
    TRANSFORM,
    UNKNOWN_VALUE,
    Value,
)

PARTIAL = frozenset({spelled.PARTIAL})

# Modules whose functions return arrays placed like their array arguments...
ARRAY_MODULES = api.ARRAY_MODULES
# ...except these, which return something else (dtypes, shapes, functions).
NOT_ARRAYS = api.names(static=True) | {
    "jax.numpy.vectorize",
    "jax.lax.fori_loop",
    "jax.lax.while_loop",
    "jax.lax.scan",
    "jax.lax.cond",
    "jax.lax.switch",
    "jax.lax.map",
}
# jax.* callables whose result is known.
SINGLE_PRODUCERS = api.public_names(single_device=True)
MULTI_PRODUCERS = frozenset({"jax.device_put_sharded", "jax.device_put_replicated"})
SHARDED_BY_ARGUMENT = {  # producer -> (position, keyword) of its sharding
    "jax.make_array_from_callback": (1, "sharding"),
    "jax.make_array_from_single_device_arrays": (1, "sharding"),
    "jax.lax.with_sharding_constraint": (1, "shardings"),
    "jax.reshard": (1, "out_shardings"),
    "jax.sharding.reshard": (1, "out_shardings"),
}
NOT_ADDRESSABLE_PRODUCERS = frozenset(
    {
        "jax.make_array_from_process_local_data",
        "jax.experimental.multihost_utils.host_local_array_to_global_array",
    }
)
HOST_PRODUCERS = api.public_names(host_copy=True)
# ...but inside a trace some return the tracer they are given.
KEEPS_TRACERS = api.KEEPS_TRACERS
# `jax._src.test_util.rand_*(rng)`: functions that make NumPy arrays (`rand_default`, `rand_int`...).
_TEST_RANDOM_FACTORIES = ("jax._src.test_util.rand_", "jax.test_util.rand_")
# The calls that make a DLPack capsule, and whose (analysis/capsules.py reads it too).
CAPSULE_PRODUCERS: dict[str, str] = {name.name: name.library for name in api.records(makes_capsules=True)}
# Public spellings only: `qualname` canonicalises. Leaves with their paths are not modelled.
TREE_LEAVES = api.public_names(tree="leaves")
TREE_FLATTEN = api.public_names(tree="flatten")
TREE_LEAVES_WITH_PATH = api.public_names(tree="leaves_with_path")
TREE_FLATTEN_WITH_PATH = api.public_names(tree="flatten_with_path")
COPIES = api.public_names(copies=True)
# The pytree helpers ``Analysis._tree_call`` answers: maps, leaves, flattens, with paths or not.
TREE_CALLS = api.TREE_MAPS | TREE_LEAVES | TREE_FLATTEN | TREE_LEAVES_WITH_PATH | TREE_FLATTEN_WITH_PATH
_TORCH_NON_TENSORS = (
    "torch.nn.",
    "torch.device",
    "torch.dtype",
    "torch.cuda.",
    "torch.compile",
    "torch.jit.",
)


def _with_leaves(tree: Value, leaf: Value, depth: int = 0) -> Value:
    """``tree`` (a container, mapping or record) with every leaf ``leaf``."""
    if tree.kind not in (CONTAINER, MAPPING, INSTANCE) or depth > 8:
        return leaf
    return replace(tree, items=tuple((key, _with_leaves(value, leaf, depth + 1)) for key, value in tree.items))


class Library:
    """What a library function known by its qualified name returns."""

    def _library_call(self, qualified: str, call: ast.Call) -> Value | None:
        label = f"`{qualified}`"
        if qualified == "importlib.import_module":
            name = self.qualname(call)
            return Value(MODULE, qualname=name) if name else UNKNOWN_VALUE
        if qualified in PARTIAL:
            return self._partial_call(call)
        if qualified == "jax.device_put":
            return self._device_put(call)
        if qualified == "dataclasses.replace" and call.args and not isinstance(call.args[0], ast.Starred):
            return self._replaced(self.value_of(call.args[0]), call)
        if qualified in CAPSULE_PRODUCERS:
            exported = self.value_of(call.args[0]) if call.args else UNKNOWN_VALUE
            return Value(CAPSULE, label, placement=exported.placement, producer=CAPSULE_PRODUCERS[qualified])
        if qualified in SINGLE_PRODUCERS:
            return Value(ARRAY, label, placement=SINGLE)
        if qualified in MULTI_PRODUCERS:
            return Value(ARRAY, label, placement=MULTI)
        if qualified in NOT_ADDRESSABLE_PRODUCERS:
            return Value(ARRAY, label, placement=NOT_ADDRESSABLE)
        if qualified in SHARDED_BY_ARGUMENT:
            position, keyword = SHARDED_BY_ARGUMENT[qualified]
            sharding = _argument(call, position, keyword)
            placement = self._sharding_placement(self.value_of(sharding))
            if placement == PLACEMENT_UNKNOWN:
                placement = MULTI  # these exist to place arrays over several devices
            kind = TRACER if self.value_of(call.args[0]).kind == TRACER and call.args else ARRAY
            return Value(kind, f"{label}", placement=placement)
        if qualified in KEEPS_TRACERS and call.args and not isinstance(call.args[0], ast.Starred):
            given = self.value_of(call.args[0])
            if given.kind == TRACER:
                return given
        if qualified in HOST_PRODUCERS or qualified.startswith("numpy."):
            return Value(NUMPY, label)
        if qualified.startswith(_TEST_RANDOM_FACTORIES):
            # issue 31: JAX's test suite makes its data with `rng = jtu.rand_default(...)`;
            # `rng(shape, dtype)` returns a NumPy array (host data), so calling it is a numpy call.
            return Value(LIBRARY, label, qualname="numpy.ndarray")
        if qualified.startswith("torch."):
            if qualified.startswith(_TORCH_NON_TENSORS):
                return UNKNOWN_VALUE
            return Value(TORCH, label)
        if qualified.startswith("cupy."):
            return Value(CUPY, label)
        if qualified in ("jax.devices", "jax.local_devices"):
            return Value(
                CONTAINER, label, items=((None, Value(DEVICE, f"`{qualified}()[...]`", placement=SINGLE)),)
            )
        if qualified in SHARDING_TYPES or qualified in _MESH_MAKERS or qualified == "jax.sharding.PartitionSpec":
            return self._placement_object(qualified, call)
        if qualified in TREE_CALLS and call.args:
            tree = self._tree_call(qualified, call, label)
            if tree is not None:
                return tree
        if qualified in COPIES and call.args and not isinstance(call.args[0], ast.Starred):
            return self.value_of(call.args[0])
        if qualified == "jax.lax.scan" and len(call.args) > 1:
            scanned = self._scanned(call)
            if scanned is not None:
                return scanned
        if qualified in ("jax.block_until_ready",) and call.args:
            return self.value_of(call.args[0])
        if (
            qualified.startswith(ARRAY_MODULES)
            and qualified not in NOT_ARRAYS
            and qualified not in TRACING_TRANSFORMS
        ):
            return self._computed(qualified, call)
        if (
            qualified in ("builtins.list", "builtins.tuple", "list", "tuple", "sorted", "builtins.sorted")
            and call.args
        ):
            return Value(CONTAINER, items=((None, self._iterated(self.value_of(call.args[0]))),))
        return None

    def _tree_call(self, qualified: str, call: ast.Call, label: str) -> Value | None:
        """What a pytree helper of ``TREE_CALLS`` gives for ``call`` (its first argument the
        tree): a map's mapped tree (None: not known), the leaves, with the treedef, or as
        (path, leaf) pairs (`for path, leaf in jax.tree_util.tree_leaves_with_path(state)`)."""
        if qualified in api.TREE_MAPS:
            return self._tree_map(call) if len(call.args) > 1 else None
        if qualified in TREE_LEAVES_WITH_PATH | TREE_FLATTEN_WITH_PATH:
            pair = Value(CONTAINER, label, items=((0, UNKNOWN_VALUE), (1, self.leaves(call.args[0]))))
            pairs = Value(CONTAINER, label, items=((None, pair),))
            return pairs if qualified in TREE_LEAVES_WITH_PATH else Value(CONTAINER, label, items=((0, pairs), (1, UNKNOWN_VALUE)))
        leaves = Value(CONTAINER, label, items=((None, self.leaves(call.args[0])),))
        return leaves if qualified in TREE_LEAVES else Value(CONTAINER, label, items=((0, leaves), (1, UNKNOWN_VALUE)))

    def _scanned(self, call: ast.Call) -> Value | None:
        """`jax.lax.scan(body, init, xs)`: (the final carry, the stacked outputs), where what
        ``body`` returns first is placed on several devices (`with_sharding_constraint` there,
        or in a helper it calls): so is the carry it hands back. None otherwise (what the scan
        gives is not known). Issue 54: the carry of such a scan read as placed like the scan's
        arguments (one device), and its export got no finding."""
        function = call.args[0]
        if isinstance(function, ast.Lambda):
            returned = self.value_of(function.body)
        else:
            body = self.value_of(function)
            owner = self._owner(body) if body.kind == FUNCTION and body.node is not None else None
            if owner is None:
                return None
            returned = owner.arrived(owner.returns_of(body.node), self)
        if returned.kind != CONTAINER:
            return None
        carry = returned.element(0)
        if carry.kind not in ARRAY_KINDS or carry.placement not in (MULTI, NOT_ADDRESSABLE):
            return None
        traced = any(self.value_of(a).kind == TRACER for a in call.args[1:] if not isinstance(a, ast.Starred))
        carried = Value(TRACER if traced else ARRAY, f"the carry of `jax.lax.scan`, from {carry.why}", placement=carry.placement)
        return Value(CONTAINER, items=((0, carried), (1, UNKNOWN_VALUE)))

    def _tree_map(self, call: ast.Call) -> Value | None:
        """``jax.tree.map(f, tree, ...)``: ``tree`` with each leaf what ``f`` returns for it, when
        that is an array whose placement is known (`lambda x: jax.device_put(x, rows)`); None
        (nothing known) otherwise. A tree the file cannot see comes back as a container of such
        leaves, whatever its keys."""
        function = call.args[0]
        if isinstance(function, ast.Lambda):
            leaf = self.value_of(function.body)
        else:
            callee = self.value_of(function)
            owner = self._owner(callee) if callee.kind == FUNCTION and callee.node is not None else None
            if owner is not None:
                leaf = owner.arrived(owner.returns_of(callee.node), self)
            elif _is_partial_put(callee) and not callee.node.args[1:]:
                # `jax.tree.map(functools.partial(jax.device_put, device=sharding), tree)`: each
                # leaf goes where the partial's keywords send it (read where it is spelled).
                holder = self._owner(callee)
                if holder is None:
                    return None
                device = next((k.value for k in callee.node.keywords if k.arg == "device"), None)
                if device is None or any(k.arg is None for k in callee.node.keywords):
                    return None
                leaf = self._put(UNKNOWN_VALUE, holder.arrived(holder.value_of(device), self))
            else:
                return None
        if leaf.kind not in ARRAY_KINDS or leaf.placement == PLACEMENT_UNKNOWN:
            return None
        tree = self.value_of(call.args[1])
        if tree.kind in ARRAY_KINDS or tree.kind in OTHER_ARRAYS or tree.kind == NUMPY:
            return leaf  # the tree is one leaf
        if tree.kind in (CONTAINER, MAPPING, INSTANCE):
            return _with_leaves(tree, leaf)
        return Value(CONTAINER, leaf.why, items=((None, leaf),))

    def _partial_call(self, call: ast.Call) -> Value:
        """``functools.partial(f, ...)``: a transform with options, or what calling it gives."""
        if not call.args:
            return UNKNOWN_VALUE
        inner = self.value_of(call.args[0])
        if inner.kind == TRANSFORM:
            if len(call.args) > 1:
                return self.apply(
                    inner, ast.Call(func=call.args[0], args=call.args[1:], keywords=call.keywords)
                )
            return Value(TRANSFORM, inner.why, transform=inner.transform.with_options(call.keywords))
        if inner.kind == CALLABLE:
            return inner
        if inner.kind == FUNCTION and len(call.args) == 1 and all(k.arg is not None for k in call.keywords):
            # `h = partial(to_host, scale=2)`: keywords only, so a call of `h` passes its
            # arguments to the function's parameters by the same positions (the bound ones are
            # constants: no call passes them).
            return inner
        if inner.kind == LIBRARY:
            if inner.qualname == "jax.device_put" and (len(call.args) > 1 or call.keywords):
                return replace(inner, node=call)  # what it binds places the arrays (_put_arguments)
            return inner
        return UNKNOWN_VALUE
