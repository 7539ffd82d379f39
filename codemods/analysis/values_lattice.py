"""What the value analysis says of an expression (``values.Analysis``): the kinds, the placements,
``Value``, and how values join where paths meet (``join``, ``join_paths``). Pure: no file is read
here, so every module of the analysis can import it."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from jax_codemod.analysis.transforms import Transform

if TYPE_CHECKING:
    from jax_codemod.analysis.values import Analysis


# Kinds -------------------------------------------------------------------------------
UNKNOWN = "unknown"
ARRAY = "jax-array"
TRACER = "tracer"
TORCH = "torch-tensor"
NUMPY = "numpy-array"
CUPY = "cupy-array"
CAPSULE = "dlpack-capsule"
DEVICE_TYPE = "dlpack-device-type"  # a DLDeviceType member
DLPACK_DEVICE = "dlpack-device"  # what ``__dlpack_device__()`` returns
CALLABLE = "transformed-callable"  # jax.jit(f), a @jax.jit function
TRANSFORM = "transform"  # jax.jit, partial(jax.jit, ...): applied to a function, a CALLABLE
SHARDING = "sharding"
DEVICE = "device"
MESH = "mesh"
PARTITION_SPEC = "partition-spec"
CONTAINER = "container"  # list, tuple, set, generator
MAPPING = "mapping"  # dict
INSTANCE = "instance"  # of a class the file defines
CLASS = "class"  # a class the file defines
FUNCTION = "function"  # a function the file defines, not transformed
MODULE = "module"
LIBRARY = "library"  # a library object known by qualified name (torch.from_dlpack)
CONSTANT = "constant"

# Placements --------------------------------------------------------------------------
PLACEMENT_UNKNOWN = "unknown"
SINGLE = "single-device"
MULTI = "multi-device"
NOT_ADDRESSABLE = "not-fully-addressable"
# When possibilities disagree, the lowest rank wins (precision first), except that a JAX array
# on several devices along one path is one there (``join_paths``).
_RANK = {SINGLE: 0, PLACEMENT_UNKNOWN: 1, MULTI: 2, NOT_ADDRESSABLE: 3}

ARRAY_KINDS = frozenset({ARRAY, TRACER})
OTHER_ARRAYS = frozenset({TORCH, NUMPY, CUPY})
# What may meet a multi-device JAX array in a join and leave it one (``join_paths``): no tracer (a
# value traced on one path is JAX001's), no container, callable or class.
_PATH_COMPANIONS = frozenset({ARRAY, UNKNOWN, CONSTANT, *OTHER_ARRAYS})
_ON_ONE_PATH = " on one path"


@dataclass(frozen=True)
class Callee:
    """What a call runs (``Analysis.callee``): the analysis of the module that defines it, its
    ``def``, whether the call binds its first parameter (a method of an instance), and the
    arguments and keywords the call passes to it."""

    analysis: Analysis
    function: ast.AST
    bound: bool
    args: list
    keywords: list


@dataclass(frozen=True)
class Value:
    """What an expression holds, as far as the file shows."""

    kind: str = UNKNOWN
    why: str = ""
    placement: str = PLACEMENT_UNKNOWN
    producer: str | None = None  # capsules
    transform: Transform | None = None  # CALLABLE and TRANSFORM
    constant: object = None  # CONSTANT, DEVICE_TYPE (the int type)
    qualname: str | None = None  # MODULE, LIBRARY
    items: tuple = ()  # CONTAINER, MAPPING, INSTANCE: ((key or None, Value), ...)
    node: ast.AST | None = field(default=None, compare=False)  # FUNCTION/CLASS def; receiver
    # The module of the project (its path under the root) whose analysis holds ``node`` and the
    # nodes of ``transform``, when that is another module than the one asking (issue 34).
    owner: str | None = field(default=None, compare=False)

    @property
    def is_jax_array(self) -> bool:
        return self.kind in ARRAY_KINDS

    @property
    def is_other_array(self) -> bool:
        return self.kind in OTHER_ARRAYS

    def element(self, key: object = None) -> Value:
        """The item under ``key`` (None: any item; every possibility, joined)."""
        if self.kind in (CONTAINER, MAPPING, INSTANCE):
            exact = [v for k, v in self.items if k is not None and k == key]
            if key is not None and exact:
                # Written more than once (`state = {"params": None}`, then `state["params"] =
                # ...`): the weaker claim, less a None placeholder (``_field_join``).
                return _field_join(exact) if self.kind != INSTANCE else join(exact)
            if key is None and self.kind != INSTANCE:
                # An iteration visits every item: one per key (its writes joined, the weaker
                # claim: the last decides), each unkeyed one on its own.
                keyed: dict = {}
                for k, v in self.items:
                    keyed.setdefault(id(v) if k is None else ("key", k), []).append(v)
                return join_paths(join(group) for group in keyed.values())
            return join(v for k, v in self.items if key is None or k is None or k == key)
        if self.kind in (*ARRAY_KINDS, *OTHER_ARRAYS):
            return self
        return UNKNOWN_VALUE


UNKNOWN_VALUE = Value()
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


class _TooDeep(BaseException):
    """An evaluation ``MAX_DEPTH`` deep: unwinds to the question asked from the top, which
    answers ``expr`` first and asks again (``Analysis._from_top``). A BaseException, so that no
    ``except Exception`` on the way takes it for a failure; a cache that holds a placeholder
    while it computes removes it on the way out (``_dropped_on_cut``)."""

    def __init__(self, expr: ast.AST) -> None:
        super().__init__()
        self.expr = expr


@dataclass(frozen=True)
class Unfinished:
    """A question the value analysis gave up on past its budget (``MAX_ROUNDS``): where it was
    asked, and the function that holds it (None: module level). What depends on it is answered
    as unknown, so a finding there may be missing: the file is not fully checked."""

    line: int
    function: str | None


# ``Analysis._mapped_result``'s walks, at module level: a nested function that calls itself
# is a cycle (function, closure cell) that holds the value until the collector runs.
def _keyed(value: Value, depth: int) -> bool:
    if value.kind in (MAPPING, INSTANCE):
        return True
    return value.kind == CONTAINER and depth < 8 and any(_keyed(v, depth + 1) for _, v in value.items)


def _shaped(value: Value, leaf: Value, depth: int) -> Value:
    if value.kind in (CONTAINER, MAPPING, INSTANCE) and depth < 8:
        return replace(value, items=tuple((k, _shaped(v, leaf, depth + 1)) for k, v in value.items))
    return leaf


def join_paths(values: Iterable[Value]) -> Value:
    """What a value is where each of ``values`` reaches along a path of its own (the
    definitions that reach a use, a function's returns, the calls that pass a parameter, a
    conditional's two sides, the elements an iteration visits): ``join``, except that a JAX
    array on several devices along one path is one here, whatever the others hold. An export
    raises on that path (`x = jnp.asarray(x)`, then `if multi: x = jax.device_put(x, sharding)`;
    a helper called with a sharded batch and with a single-device one).

    Not for writes that do not exclude each other along a path (every `e.arr = ...` of the
    file, every assignment of a global): the last one read decides, and that is the weaker
    claim's business."""
    values = list(values)
    kinds = {v.kind for v in values}
    if len(values) > 1 and kinds == {CONTAINER} and _same_positions(values):
        # Tuples of one shape (the `(key, value)` pairs of `d.items()`): position by position,
        # each path's own.
        positions = [k for k, _ in values[0].items]
        return Value(CONTAINER, values[0].why, items=tuple(
            (k, join_paths(dict(v.items)[k] for v in values)) for k in positions
        ))
    if len(values) > 1 and ARRAY in kinds and kinds <= _PATH_COMPANIONS:
        several = max(values, key=lambda v: _RANK.get(v.placement, 1) if v.kind == ARRAY else -1)
        if several.placement in (MULTI, NOT_ADDRESSABLE):
            if all(v.kind == ARRAY and v.placement == several.placement for v in values) or several.why.endswith(_ON_ONE_PATH):
                return several
            return replace(several, why=several.why + _ON_ONE_PATH)
    return join(values)


def _same_positions(values: list[Value]) -> bool:
    positions = [k for k, _ in values[0].items]
    return (
        bool(positions)
        and all(isinstance(k, int) for k in positions)
        and len(set(positions)) == len(positions)
        and all([k for k, _ in v.items] == positions for v in values)
    )


def join(values: Iterable[Value]) -> Value:
    """What a value is when it may be any of ``values``: the claim all of them support."""
    values = list(values)
    if not values:
        return UNKNOWN_VALUE
    first = values[0]
    if len(values) == 1:
        return first
    kinds = {v.kind for v in values}
    if kinds <= ARRAY_KINDS and len(kinds) == 2:
        kinds = {TRACER}
        values = [replace(v, kind=TRACER) for v in values]
        first = values[0]
    if len(kinds) != 1:
        return UNKNOWN_VALUE
    kind = first.kind
    weakest = min(values, key=lambda v: _RANK.get(v.placement, 1))
    if kind in (CONTAINER, MAPPING, INSTANCE):
        items = tuple(item for v in values for item in v.items)
        node = first.node if all(v.node is first.node for v in values) else None
        owner = first.owner if node is not None else None
        return Value(kind, first.why, items=items, node=node, owner=owner)
    if kind == CAPSULE:
        producers = {v.producer for v in values}
        return replace(weakest, producer=producers.pop() if len(producers) == 1 else "unknown")
    if kind in (CALLABLE, TRANSFORM):
        names = {v.transform.name for v in values if v.transform}
        if len(names) != 1:
            return UNKNOWN_VALUE
        return weakest
    if kind in (CONSTANT, DEVICE_TYPE, MODULE, LIBRARY, FUNCTION, CLASS):
        if len({(v.constant, v.qualname, id(v.node)) for v in values}) != 1:
            return Value(kind, first.why) if kind in (CONSTANT, DEVICE_TYPE) else UNKNOWN_VALUE
        return first
    return weakest


def _field_join(values: list[Value]) -> Value:
    """A field's values joined. `self.state = None` in `__init__`, set for real in `reset()`: a
    placeholder. What reads the field either gets the real value or fails on None whatever it
    is (a gather of None is None), so the placeholder does not weaken the claim."""
    real = [v for v in values if not (v.kind == CONSTANT and v.constant is None)]
    return join(real or values)
