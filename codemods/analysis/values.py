"""What each expression of a file holds, and why: the one value analysis every rule queries.

``analysis_for(ctx)`` (also ``ctx.analysis``) returns the file's ``Analysis``, built at most
once per ``FileContext`` and lazily: nothing is computed until a rule asks, and each answer
is memoized. The API (stable; add, don't rename):

- ``value_of(expr) -> Value``: the value's ``kind`` (``ARRAY``, ``TRACER``, ``TORCH``,
  ``NUMPY``, ``CUPY``, ``CAPSULE``, ``DEVICE_TYPE``, ``DLPACK_DEVICE``, ``CALLABLE``,
  ``TRANSFORM``, ``SHARDING``, ``DEVICE``, ``MESH``, ``PARTITION_SPEC``, ``CONTAINER``,
  ``MAPPING``, ``INSTANCE``, ``CLASS``, ``FUNCTION``, ``MODULE``, ``LIBRARY``,
  ``CONSTANT`` or ``UNKNOWN``), its ``placement`` for arrays, tracers and shardings
  (``SINGLE``, ``MULTI``, ``NOT_ADDRESSABLE`` or ``PLACEMENT_UNKNOWN``), a capsule's
  ``producer`` (``"jax"``, ``"torch"``, ``"cupy"``, ``"numpy"``, ``"parameter"``,
  ``"unknown"``), a callable's ``transform``, a constant's or device type's ``constant``,
  the ``qualname`` of a module or library object, and ``why``: a short origin for messages
  ("`jax.device_put` with a multi-device sharding").
- ``transform_of(expr) -> Transform | None``: the JAX transform an expression applies or
  has applied: ``jax.jit``, ``partial(jax.jit, static_argnames=...)``, an alias of either
  (``fast = partial(jax.jit, ...)``), a decorator factory (``def jit_with(**kw): return
  partial(jax.jit, **kw)``), a jitted function or method, an element of a dict of jitted
  functions. ``Transform.name`` is the public qualified name (``jax.jit``, ``jax.pmap``,
  ``jax.shard_map``, ``jax.vmap``, ...), ``Transform.options`` its keywords, and
  ``Transform.function`` the function it wraps when the file defines it.
- ``function_transforms(def) -> list[Transform]``: the transforms a ``def`` is traced under,
  from its decorators and from calls such as ``jax.jit(step)`` in the file; ``tracing``: the
  file's ``analysis.tracing.Tracing``, which answers it and every other question about what
  runs in a trace (traced functions and helpers, traced parameters, a function's taint).
- ``is_tracer(expr)``, ``placement(expr)``, ``leaves(expr)`` (a pytree's leaves, joined),
  ``returns_of(def)``, ``qualname(expr)`` (the file's one resolver, ``analysis.names``: the
  canonical name through imports, local aliases, ``importlib.import_module("jax.dlpack")`` and
  ``getattr(jax.dlpack, "to_dlpack")``, knowing that a local binding shadows an import).

Flows followed within the file: the definitions that reach a use (``scopes``), tuple
unpacking, ``for`` targets over lists, dicts, ``.items()`` and ``.values()``, literals,
comprehensions and their subscripts, dataclass and NamedTuple instances and their fields,
``self.attr`` set in methods, return values of the file's functions and methods, parameter
annotations (``jax.Array``, ``jnp.ndarray``, jaxtyping ``Float[Array, "b"]``, ``torch.Tensor``,
``np.ndarray``), ``isinstance`` and ``match`` narrowing, parameters of functions passed to
``jax.tree.map``, and explicit-sharding mode (``jax.set_mesh``), under which JAX's creation
and computation results live on the mesh. Also (issue 34): ``partial(jax.device_put, ...)``
aliases, ``jax.device_put`` of a tree (each leaf by the matching sharding leaf), what a
generator yields (``for``, ``async for``, ``next``), the dicts and records a ``pmap`` or
``shard_map`` function returns, ``self`` in a record class's methods (the instances the file
reads the method of) and a parameter annotated with a record class (the instances its calls
pass). When possibilities disagree the weaker claim wins, with one exception (``join_paths``):
a JAX array on several devices along one path to a use (a definition that reaches it, a return,
a call that passes it, an element an iteration visits) is one there, since an export raises on
that path. Writes that do not exclude each other (every `e.arr = ...`, a global's assignments)
keep the weaker claim.
"""

from __future__ import annotations

import ast
import bisect
import copy
import re
import weakref
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import cached_property

from jax_codemod.analysis import api
from jax_codemod.analysis import transforms as spelled
from jax_codemod.analysis.classes import classes_for, statements
from jax_codemod.analysis.expected_errors import expected_errors_of
from jax_codemod.analysis.guards import isinstance_classes
from jax_codemod.analysis.names import Resolver, canonical, name_lines, spelled_as_parsed
from jax_codemod.analysis.scopes import (
    CHILD_FIELDS,
    ENTER,
    ITER,
    Definition,
    Scopes,
    ancestors,
    child_fields,
    function_of,
    scope_nodes,
    walk_values,
)
from jax_codemod.analysis.tracing import Tracing, tracing_for
from jax_codemod.analysis.transforms import Transform

# Re-exports followed from a module's text before one is parsed (`pkg.f` -> `pkg.core.f`).
MAX_REEXPORTS = 8

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
# How a list or dict bound to a name is written into (``Analysis._with_writes``), as spelled
# after the name.
_WRITE_SPELLINGS = (".append(", ".insert(", ".extend(", "[", ".update(", ".setdefault(")

# DLDeviceType members of the DLPack standard (dlpack.h).
DL_DEVICE_TYPES = {
    "kDLCPU": 1,
    "kDLCUDA": 2,
    "kDLCUDAHost": 3,
    "kDLOpenCL": 4,
    "kDLVulkan": 7,
    "kDLMetal": 8,
    "kDLVPI": 9,
    "kDLROCM": 10,
    "kDLROCMHost": 11,
    "kDLExtDev": 12,
    "kDLCUDAManaged": 13,
    "kDLOneAPI": 14,
    "kDLWebGPU": 15,
    "kDLHexagon": 16,
    "kDLMAIA": 17,
}

# JAX's transforms applied as ``T(f, ...)`` or ``@T``/``@T(...)`` whose call returns the function.
WRAPPING_TRANSFORMS = frozenset(
    record.name for record in api.records(library="jax", public=None) if record.transform in ("jit", "wraps")
)
# Transforms: a function passed through them runs on tracers (the wrapping ones, and those that
# call the function at once).
TRACING_TRANSFORMS = api.public_names(library="jax", transform=True)
JIT_TRANSFORMS = api.public_names(library="jax", transform="jit")
MULTI_TRANSFORMS = api.public_names(transform=True, multi_device=True)
PARTIAL = frozenset({spelled.PARTIAL})

JAX_ARRAY_TYPES = api.public_names(array_type="jax")
MAPPING_TYPES = frozenset(
    {"dict", "typing.Dict", "typing.Mapping", "collections.abc.Mapping", "typing.MutableMapping"}
)
SEQUENCE_TYPES = frozenset(
    {"list", "tuple", "typing.List", "typing.Tuple", "typing.Sequence", "collections.abc.Sequence"}
)
TORCH_TYPES = api.public_names(array_type="torch")
NUMPY_TYPES = api.public_names(array_type="numpy")
CAPSULE_TYPES = frozenset({"types.CapsuleType", "typing_extensions.CapsuleType"})
SHARDING_TYPES = {
    "jax.sharding.NamedSharding": MULTI,
    "jax.sharding.PositionalSharding": MULTI,
    "jax.sharding.PmapSharding": MULTI,
    "jax.sharding.GSPMDSharding": MULTI,
    "jax.sharding.SingleDeviceSharding": SINGLE,
    "jax.sharding.Sharding": PLACEMENT_UNKNOWN,
    # jax._src.sharding_impls' factory of a SingleDeviceSharding (JAX's own tests use it)
    "jax.sharding.make_single_device_sharding": SINGLE,
}
DEVICE_TYPES = frozenset({"jax.Device", "jaxlib.xla_client.Device", "jax.lib.xla_client.Device"})

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
# Creation without array arguments: on the default device (or, in explicit mode, the mesh).
CREATION = api.members(creates="shape")
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
MESH_CONTEXTS = frozenset({"jax.set_mesh"})
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
ARRAY_ATTRIBUTES = frozenset({"T", "mT", "real", "imag"})
_TORCH_NON_TENSORS = (
    "torch.nn.",
    "torch.device",
    "torch.dtype",
    "torch.cuda.",
    "torch.compile",
    "torch.jit.",
)
# How many evaluations one question may stack before it is cut (``Analysis.value_of``): the
# Python stack, not the answer, is what this bounds. A cut is no answer: the question is asked
# again once the expression cut is answered from the top (``_from_top``), up to ``MAX_ROUNDS``
# times, so a variable reassigned hundreds of times in a row, or through hundreds of branches,
# keeps its placement. Past that the function is reported as not fully checked (``unfinished``).
MAX_DEPTH = 40
MAX_ROUNDS = 400
# Decorators after which a function is still read as written: its calls return what its body
# returns (a `contextmanager`'s call is the generator its body makes; `with` enters it).
_RETURNING_DECORATORS = frozenset(
    {"staticmethod", "classmethod", "functools.wraps", "contextlib.contextmanager", "contextlib.asynccontextmanager"}
)
# How many calls deep a function of another module is read with a call's arguments
# (``Analysis._returned_for``): a helper's helper, not a recursion through modules.
MAX_SPECIALIZED = 3
_SPECIALIZING = [0]  # how deep this process is in such readings now
# The helper JAX002/JAX006 insert: what it returns is known, whatever the file defines it as.
GATHER_HELPER = "ensure_single_device"


# Library base classes whose instances run their own methods (``api`` ``applies``): the
# method's name -> {the class's qualified name: that method's own keywords}.
_APPLIERS: dict[str, dict[str, tuple[str, ...]]] = {}
for _record in api.records(applies=True):
    _APPLIERS.setdefault(_record.applies, {})[_record.name] = _record.apply_options


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


# The base that makes a class a structural type (``Analysis._protocol``).
_PROTOCOLS = frozenset({"typing.Protocol", "typing_extensions.Protocol"})
# Kinds whose reason a finding quotes: located in their module when they come from another.
_LOCATED = frozenset({ARRAY, TRACER, CAPSULE, SHARDING, MESH})
# What makes a device mesh (one of one device is no multi-device placement).
_MESH_MAKERS = frozenset({"jax.make_mesh", "jax.sharding.Mesh", "jax.experimental.mesh_utils.create_device_mesh"})
_USE_KINDS = ("first", "func", "method", "load")
# Names looked up one by one before a file's full call index is built instead.
_NAMES_BEFORE_INDEX = 32
# ... while the names looked up so far stand on at most one line in this many; past that,
# the index is cheaper.
_NEAR_SHARE = 6


def _uses_near(tree: ast.Module, text: str, name: str) -> dict[str, list[ast.AST]]:
    """``Analysis._index()``'s lists for ``name``, from the statements whose lines hold it.

    Exact when ``spelled_as_parsed(text)``. Only statements are skipped (their positions are
    exact; a decorated definition starts at its first decorator), so every node that names
    ``name`` is reached, and the breadth-first walk of what is kept visits the kept nodes in
    ``ast.walk``'s order.
    """
    return _uses_on_lines(tree, name, name_lines(text, name))


def _uses_on_lines(tree: ast.Module, name: str, lines: list[int]) -> dict[str, list[ast.AST]]:
    """``_uses_near``'s walk: the statements that hold none of ``lines`` are skipped."""
    uses: dict[str, list[ast.AST]] = {kind: [] for kind in _USE_KINDS}
    if not lines:
        return uses
    first, func, method, load = (uses[kind] for kind in _USE_KINDS)
    last = lines[-1]
    queue: list[ast.AST] = [tree]
    append, leaves, stmt, bisect_left = queue.append, _LEAF_TOKENS, ast.stmt, bisect.bisect_left
    fields_of = CHILD_FIELDS.get
    index = 0
    while index < len(queue):
        node = queue[index]
        index += 1
        if isinstance(node, ast.Call):
            if node.args and isinstance(node.args[0], ast.Name) and node.args[0].id == name:
                first.append(node)
            if isinstance(node.func, ast.Name):
                if node.func.id == name:
                    func.append(node)
            elif isinstance(node.func, ast.Attribute) and node.func.attr == name:
                method.append(node)
        elif isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
            load.append(node)
        # ast.iter_child_nodes, inlined, less the leaf tokens (``Load``, ``Add``: childless,
        # so leaving them out moves no other node in the breadth-first order); only the fields
        # that can hold other nodes are read (``scopes.child_fields``: not ``ctx``, ``id``...).
        fields = fields_of(node.__class__)
        if fields is None:
            fields = child_fields(node.__class__)
        for field_name in fields:
            value = getattr(node, field_name, None)
            if value.__class__ is list:
                for child in value:
                    if isinstance(child, stmt):  # statements only ever stand in lists
                        start = child.lineno
                        for decorator in getattr(child, "decorator_list", ()):
                            start = min(start, decorator.lineno)
                        if start > last:
                            continue
                        if lines[bisect_left(lines, start)] > child.end_lineno:
                            continue
                        append(child)
                    elif isinstance(child, _AST) and child.__class__ not in leaves:
                        append(child)
            elif isinstance(value, _AST) and value.__class__ not in leaves:
                append(value)
    return uses


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


def _constant_strs(node: ast.AST | None) -> list[str] | None:
    if node is None:
        return []
    elements = node.elts if isinstance(node, (ast.Tuple, ast.List)) else [node]
    found = []
    for element in elements:
        if not (isinstance(element, ast.Constant) and isinstance(element.value, str)):
            return None
        found.append(element.value)
    return found


def _subclasses(*bases: type) -> frozenset[type]:
    found, stack = set(), list(bases)
    while stack:
        kind = stack.pop()
        found.add(kind)
        stack.extend(kind.__subclasses__())
    return frozenset(found)


# Childless nodes that say how a name is used or what an operator is, never a value.
_LEAF_TOKENS = _subclasses(ast.expr_context, ast.operator, ast.unaryop, ast.boolop, ast.cmpop)
_AST = ast.AST


# ``[n for n in ast.walk(node) if type(n) not in _LEAF_TOKENS]``: the tokens are what
# scopes.children leaves out (the ctx/op/ops fields), so its walk is this one.
_walk_without_leaf_tokens = walk_values


class Analysis:
    """The value analysis of one file. Use ``analysis_for(ctx)``; never build one per rule."""

    # The values of parameters given by one call (``specialized``); none for a file's own analysis.
    _parameters: dict[ast.arg, Value] = {}

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.scopes = Scopes(ctx)
        self._values: dict[ast.AST, Value] = {}
        self._active: set[ast.AST] = set()
        # Past the budget: a cut answers unknown instead of unwinding (``_from_top``).
        self._cut_quietly = False
        # The questions given up on (``unfinished``); shared with the ``specialized`` copies.
        self._unfinished: list[Unfinished] = []
        self._returns: dict[ast.AST, Value] = {}
        self._usage: dict[str, dict[str, list[ast.AST]]] | None = None
        self._usage_by_name: dict[str, dict[str, list[ast.AST]]] = {}
        self._near_lines = 0  # lines the per-name look-ups have kept, all names together
        self._multi_process: bool | None = None
        self._mesh_statements: list[ast.AST] | None = None
        self._assigned_attributes: dict[ast.AST, dict[str, list[ast.expr]]] = {}
        self._definitions_of: dict[ast.AST, list[ast.AST]] = {}
        self._blocks: dict[int, tuple] = {}  # id(statement list) -> _early_exits (and the list, kept alive)
        self._self_values: dict[ast.AST, Value] = {}  # method -> `self` (_self_value)
        self._attribute_index: dict[str, list[ast.Attribute]] | None = None
        self._field_stores: dict[tuple[str, str], list[tuple[ast.stmt, ast.expr | None]]] | None = None
        self._writing: set[ast.AST] = set()  # the definitions whose writes are being read (_with_writes)
        self._class_attributes: dict[tuple[ast.ClassDef, str, bool], Value] = {}

    @cached_property
    def nodes(self) -> list[ast.AST]:
        """Every node of the file but the expression contexts and operators (``Load``, ``Add``,
        ``Eq``...: leaves no scan asks about, a third of all nodes), in ``ast.walk``'s order: one
        walk, shared by the analyses and rules that scan the whole file (each walked it again)."""
        return _walk_without_leaf_tokens(self.ctx.tree)

    # Public queries ------------------------------------------------------------------

    def value_of(self, expr: ast.AST | None) -> Value:
        if expr is None:
            return UNKNOWN_VALUE
        found = self._values.get(expr)
        if found is not None:
            return found
        if expr in self._active:
            return UNKNOWN_VALUE
        if len(self._active) > MAX_DEPTH:
            if self._cut_quietly:
                return UNKNOWN_VALUE
            raise _TooDeep(expr)
        if not self._active:
            return self._from_top(expr)
        return self._evaluated(expr)

    def _evaluated(self, expr: ast.AST) -> Value:
        self._active.add(expr)
        try:
            found = self._value(expr)
        finally:
            self._active.discard(expr)
        self._values[expr] = found
        return found

    def _from_top(self, expr: ast.AST) -> Value:
        """``expr``'s value, asked with nothing else being evaluated. Each cut unwinds to here
        (nothing below it was memoized: it rested on the cut); the expression cut is answered
        first, from the top, with the whole depth again, and the question asked again. A chain
        of ``x = x * k`` is so answered a few dozen links at a time, iteratively, each link
        once."""
        pending, rounds = [expr], 0
        while pending:
            try:
                found = self._evaluated(pending[-1])
            except _TooDeep as cut:
                rounds += 1
                if rounds <= MAX_ROUNDS and cut.expr not in pending:
                    pending.append(cut.expr)
                    continue
                return self._given_up(expr)
            pending.pop()
        return found

    def _given_up(self, expr: ast.AST) -> Value:
        """Past ``MAX_ROUNDS`` (or a cut that needs itself): ``expr`` as far as ``MAX_DEPTH``
        shows, deeper questions answered unknown, and the function noted as not fully checked."""
        function = next((a for a in ancestors(self.ctx, expr) if isinstance(a, _DEFS)), None)
        name = getattr(function, "name", None)
        entry = Unfinished(getattr(expr, "lineno", None) or getattr(function, "lineno", 0), name)
        if all(e.function != name for e in self._unfinished):
            self._unfinished.append(entry)
        self._cut_quietly = True
        try:
            return self._evaluated(expr)
        finally:
            self._cut_quietly = False

    @property
    def unfinished(self) -> list[Unfinished]:
        """The questions given up on past the budget, one per function: a rule's silence there
        is no proof (the engine reports the file as not fully checked)."""
        return list(self._unfinished)

    def placement(self, expr: ast.AST) -> str:
        return self.value_of(expr).placement

    def is_tracer(self, expr: ast.AST) -> bool:
        return self.value_of(expr).kind == TRACER

    def transform_of(self, expr: ast.AST) -> Transform | None:
        value = self.value_of(expr)
        return value.transform if value.kind in (CALLABLE, TRANSFORM) else None

    def leaves(self, expr: ast.AST) -> Value:
        return self._leaves(self.value_of(expr))

    def iterated(self, expr: ast.AST) -> Value:
        """One element of iterating ``expr`` (``for x in expr``, ``map(f, expr)``), joined."""
        return self._iterated(self.value_of(expr))

    @cached_property
    def names(self) -> Resolver:
        """The file's resolver (``analysis.names``), with scopes and values to follow."""
        # Through a weak reference: bound methods kept here would make the analysis a cycle
        # that holds the whole tree until the cyclic collector walks it (the engine relies on
        # reference counting to free each file's tree when the file is done).
        analysis = weakref.ref(self)
        return Resolver(
            self.ctx._bindings,
            lambda name: analysis()._module_level(name),
            lambda name: analysis()._holds(name),
        )

    def qualname(self, expr: ast.AST) -> str | None:
        """The public qualified name ``expr`` refers to, or None (``names.Resolver.qualname``)."""
        return self.names.qualname(expr)

    def _module_level(self, name: ast.Name) -> bool:
        return self.scopes.binding_scope(name) is self.ctx.tree

    def _holds(self, name: ast.Name) -> str | None:
        value = self.value_of(name)
        return value.qualname if value.kind in (MODULE, LIBRARY) else None

    @property
    def tracing(self) -> Tracing:
        """The file's tracing answer (``analysis.tracing``): which functions run under which
        transform, which parameters are traced, the local taint of a traced function."""
        return tracing_for(self.ctx)

    def function_transforms(self, function: ast.AST) -> list[Transform]:
        """Transforms ``function`` runs under: its decorators, and calls that pass it to one
        (``Tracing.function_transforms``)."""
        return self.tracing.function_transforms(function)

    @property
    def spellings(self):
        """How the file spells transforms (``analysis.transforms``): equinox and flax ones,
        factories that take the function (``def jit(fn=None, **kw)``), substituted options."""
        return self.tracing.spellings

    def applied_transform(self, expr: ast.AST) -> Transform | None:
        """The transform ``expr`` applies when called on a function (``jax.jit``,
        ``partial(jax.jit, ...)``, an alias or factory result), not a transformed function."""
        value = self.value_of(expr)
        return value.transform if value.kind == TRANSFORM else None

    def calls_passing(self, name: str) -> list[ast.Call]:
        """The calls whose first argument is the bare name ``name``."""
        return self._calls_passing(name)

    def function_definitions(self, expr: ast.AST) -> list[ast.AST]:
        """The ``def``s the name ``expr`` may refer to."""
        return self._function_definitions(expr)

    @staticmethod
    def transform_from_spelling(spelled, function: ast.AST) -> Transform:
        """A transform as ``Spellings`` reads a decorator, canonically named, applied to ``function``."""
        return Transform(canonical(spelled.name), spelled.options, function=function)

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

    # Expressions ---------------------------------------------------------------------

    def _value(self, expr: ast.AST) -> Value:
        if isinstance(expr, ast.Name):
            return self._name_value(expr)
        if isinstance(expr, ast.Call):
            return self._call_value(expr)
        if isinstance(expr, ast.Attribute):
            return self._attribute_value(expr)
        if isinstance(expr, ast.Subscript):
            return self._subscript_value(expr)
        if isinstance(expr, ast.Constant):
            return Value(CONSTANT, constant=expr.value)
        if isinstance(expr, (ast.Tuple, ast.List, ast.Set)):
            return self._sequence_value(expr)
        if isinstance(expr, ast.Dict):
            return self._dict_value(expr)
        if isinstance(expr, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
            return Value(CONTAINER, items=((None, self.value_of(expr.elt)),))
        if isinstance(expr, ast.DictComp):
            return Value(MAPPING, items=((None, self.value_of(expr.value)),))
        if isinstance(expr, ast.BinOp):
            return self._combined([expr.left, expr.right], expr)
        if isinstance(expr, ast.UnaryOp):
            operand = self.value_of(expr.operand)
            if (
                isinstance(expr.op, ast.USub)
                and operand.kind == CONSTANT
                and isinstance(operand.constant, int)
            ):
                return Value(CONSTANT, constant=-operand.constant)
            return operand if operand.kind in (*ARRAY_KINDS, *OTHER_ARRAYS) else UNKNOWN_VALUE
        if isinstance(expr, ast.NamedExpr):
            return self.value_of(expr.value)
        if isinstance(expr, ast.IfExp):
            sides = [self.value_of(expr.body), self.value_of(expr.orelse)]
            # `x if len(x.devices()) == 1 else gather(x)`: a test of what a side holds picks it.
            if _inspects(expr.test, _names_read(expr.body) | _names_read(expr.orelse)):
                return join(sides)
            return join_paths(sides)
        if isinstance(expr, ast.Lambda):
            return Value(FUNCTION, node=expr, owner=self._here)
        if isinstance(expr, ast.Starred):
            return self.value_of(expr.value)
        if isinstance(expr, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return self._function_value(expr)
        return UNKNOWN_VALUE

    def _sequence_value(self, expr) -> Value:
        items = []
        starred = False
        for index, element in enumerate(expr.elts):
            if isinstance(element, ast.Starred):
                starred = True
                items.extend((None, v) for _, v in self.value_of(element.value).items)
            else:
                items.append(
                    (None if starred or isinstance(expr, ast.Set) else index, self.value_of(element))
                )
        return Value(CONTAINER, items=tuple(items))

    def _dict_value(self, expr: ast.Dict) -> Value:
        items = []
        for key, value in zip(expr.keys, expr.values, strict=True):
            if key is None:  # {**other}
                items.extend(self.value_of(value).items)
                continue
            constant = key.value if isinstance(key, ast.Constant) else None
            items.append((constant, self.value_of(value)))
        return Value(MAPPING, items=tuple(items))

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

    # Names -----------------------------------------------------------------------------

    def _name_value(self, name: ast.Name) -> Value:
        scopes = self.scopes
        scope = scopes.scope_of(name)
        if scopes.declared_global(name.id, scope):
            definitions = list(reversed(scopes.definitions(self.ctx.tree).get(name.id, [])))
            return join(self._definition_value(d) for d in definitions) if definitions else UNKNOWN_VALUE
        reaching, complete = scopes.reaching(name)
        values = [self._definition_value(d) for d in reaching]
        if not complete:
            parameter, outer, known = scopes.entry(name.id, scope)
            if parameter is not None:
                values.append(self.parameter_value(parameter))
            elif known:
                values.extend(self._definition_value(d) for d in outer)
            elif not values:
                values.append(self._global_value(name))
            else:
                values.append(UNKNOWN_VALUE)
        result = join_paths(values)
        if result.placement in (MULTI, NOT_ADDRESSABLE) and self._tested_before_bound(name.id, reaching, scope):
            result = join(values)
        if result.kind == UNKNOWN:
            narrowed = self._narrowed(name, reaching)
            if narrowed is not None:
                return narrowed
        return result

    def _guarded_return(self, function: ast.AST, statements: list[ast.Return]) -> bool:
        """Whether a `return` of ``function`` sits under an `if` or `while` whose test looks into
        a name the returned expression reads (``_inspects``)."""
        return any(self._under_test_of(statement, function, _names_read(statement.value)) for statement in statements)

    def _tested_before_bound(self, name: str, reaching: list[Definition], scope: ast.AST) -> bool:
        """Whether a definition of ``name`` that reaches here is bound under an `if` or `while`
        whose test looks into ``name`` (``_inspects``: `if len(x.sharding.device_set) > 1: x =
        jax.device_put(x, device)`): which path runs depends on what it holds, so a sharded array
        along the other path is no evidence (``join_paths`` gives way to the weaker claim)."""
        return any(self._under_test_of(definition.node, scope, {name}) for definition in reaching)

    def _under_test_of(self, node: ast.AST, scope: ast.AST, names: set[str]) -> bool:
        """Whether ``node`` sits, within ``scope``, under an `if` or `while` whose test looks
        into one of ``names`` (``_inspects``)."""
        for ancestor in self.ctx.ancestors(node):
            if ancestor is scope:
                return False
            if ancestor.__class__ in (ast.If, ast.While) and _inspects(ancestor.test, names):
                return True
        return False

    def _global_value(self, name: ast.Name) -> Value:
        qualified = canonical(self.ctx.qualname(name))
        return self._qualified_value(qualified) if qualified else UNKNOWN_VALUE

    def _definition_value(self, definition: Definition) -> Value:
        node = definition.node
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            return self._import_value(node, definition)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return self._function_value(node)
        if isinstance(node, ast.ClassDef):
            return Value(CLASS, f"class `{node.name}`", node=node, owner=self._here)
        if isinstance(node, ast.AugAssign):
            # ``x += y``: what ``x`` held before, combined with ``y``.
            return self._combine([self.value_of(node.target), self.value_of(node.value)], node)
        if definition.value is None:
            return UNKNOWN_VALUE
        value = self.value_of(definition.value)
        if not definition.path and definition.value.__class__ in (ast.List, ast.Dict) and definition.name:
            value = self._with_writes(definition, value)
        for step in definition.path:
            if step == ENTER:
                value = self._entered(value, node.__class__ is ast.AsyncWith)
            else:
                value = self._iterated(value) if step == ITER else value.element(step)
        return value

    def _with_writes(self, definition: Definition, value: Value) -> Value:
        """A list or dict display bound to a name, with what the name's scope writes into it
        where that binding reaches: `out.append(v)`, `out.insert(i, v)`, `out.extend(vs)`,
        `d[k] = v`, `d.update(...)`, `d.setdefault(k, v)` (`outputs = []`, then a loop that
        appends a sharded batch to it, then an export of each). Writes of one key keep the
        weaker claim where they disagree, less a `None` placeholder (``element``)."""
        name, text = definition.name, self.ctx.text
        if not any(f"{name}{spelled}" in text for spelled in _WRITE_SPELLINGS) or definition.node in self._writing:
            return value
        self._writing.add(definition.node)
        try:
            # (the binding must reach the write: `out = []` again later is another list)
            return self._written_into(
                value, self._uses(name)["load"], lambda load: any(d.node is definition.node for d in self.scopes.reaching(load)[0])
            )
        finally:
            self._writing.discard(definition.node)

    def _written_into(self, value: Value, loads: Iterable[ast.expr], reaches=None) -> Value:
        """``value`` (a list's or dict's) with the items the writes around ``loads`` put in it
        (``reaches``: asked of a load that writes, whether it writes into this value)."""
        items = [
            item for load in loads
            if (written := self._written(load, value.kind)) and (reaches is None or reaches(load))
            for item in written
        ]
        return replace(value, items=(*value.items, *items)) if items else value

    def _written(self, load: ast.expr, kind: str) -> list[tuple[object, Value]]:
        """The items the write around ``load`` (a read of the list's or dict's name, or of
        `self.<attr>`) puts in it."""
        parent = self.ctx.parent(load)
        if parent.__class__ is ast.Subscript and parent.value is load and parent.ctx.__class__ is ast.Store:
            statement = self.ctx.parent(parent)
            key = parent.slice.value if parent.slice.__class__ is ast.Constant else None
            exact = statement.__class__ is ast.Assign and parent in statement.targets
            return [(key, self.value_of(statement.value) if exact else UNKNOWN_VALUE)]
        if parent.__class__ is not ast.Attribute or parent.value is not load:
            return []
        call = self.ctx.parent(parent)
        if call.__class__ is not ast.Call or call.func is not parent or any(a.__class__ is ast.Starred for a in call.args):
            return []
        method, args = parent.attr, call.args
        if kind == CONTAINER and method == "append" and len(args) == 1:
            return [(None, self.value_of(args[0]))]
        if kind == CONTAINER and method == "insert" and len(args) == 2:
            return [(None, self.value_of(args[1]))]
        if kind == CONTAINER and method == "extend" and len(args) == 1:
            return [(None, self.iterated(args[0]))]
        if kind == MAPPING and method == "setdefault" and len(args) == 2:
            return [(args[0].value if args[0].__class__ is ast.Constant else None, self.value_of(args[1]))]
        if kind == MAPPING and method == "update":
            found = [(k.arg, self.value_of(k.value)) for k in call.keywords if k.arg is not None]
            for arg in args:
                other = self.value_of(arg)
                found.extend(other.items if other.kind == MAPPING else [(None, UNKNOWN_VALUE)])
            return found
        return []

    def _entered(self, manager: Value, asynchronous: bool) -> Value:
        """What `with manager as name` binds: what the `__enter__` (`__aenter__`) of a project
        class returns, or what a `contextlib.contextmanager` generator yields (its call is the
        generator, ``_generated``)."""
        if manager.kind == INSTANCE:
            method = self._iteration_method(manager, "__aenter__" if asynchronous else "__enter__")
            if method is None:
                return UNKNOWN_VALUE
            owner, function = method
            return owner.arrived(owner.returns_of(function), self, function.lineno)
        if manager.kind == CONTAINER:
            return manager.element(None)
        return UNKNOWN_VALUE

    def _import_value(self, node: ast.AST, definition: Definition) -> Value:
        for alias in node.names:
            local = (alias.asname or alias.name).split(".", 1)[0]
            if local != definition.name:
                continue
            if isinstance(node, ast.Import):
                qualified = alias.name if alias.asname else alias.name.split(".", 1)[0]
            elif node.level:
                project = self.ctx.project
                base = project.absolute(self.ctx.root_path, node.level, node.module) if project else None
                if base is None:
                    return UNKNOWN_VALUE
                qualified = f"{base}.{alias.name}"
            elif not node.module:
                return UNKNOWN_VALUE
            else:
                qualified = f"{node.module}.{alias.name}"
            return self._qualified_value(canonical(qualified))
        return UNKNOWN_VALUE

    def _function_value(self, function: ast.AST) -> Value:
        decorators = list(getattr(function, "decorator_list", ()))
        if not decorators:
            return Value(FUNCTION, f"`{function.name}`", node=function, owner=self._here)
        transform = None
        for decorator in reversed(decorators):
            value = self.value_of(decorator)
            if value.kind != TRANSFORM:
                if self.decorator_name(decorator) in _RETURNING_DECORATORS or self._caches(decorator):
                    continue
                if transform is None and _returns_its_argument(value, self._owner(value)):
                    continue  # `@register("torch")`: a registry that hands the function back
                return UNKNOWN_VALUE if transform is None else self._callable(transform, function)
            if transform is None:
                transform = value.transform.with_options((), function)
        if transform is None:  # `@staticmethod`, `@classmethod`: the function itself
            return Value(FUNCTION, f"`{function.name}`", node=function, owner=self._here)
        return self._callable(transform, function)

    def _callable(self, transform: Transform, function: ast.AST | None) -> Value:
        transform = replace(transform, function=function) if function is not None else transform
        return Value(
            CALLABLE, transform.why or f"a `{transform.name}` function", transform=transform, node=function, owner=self._here
        )

    def _function_definitions(self, expr: ast.AST) -> list[ast.AST]:
        """The ``def``s the name ``expr`` may refer to (binding scope and definitions alone, so
        the same whenever asked). Remembered per use: ``function_transforms`` asks it of every
        call that passes a function's name, once per function of that name, and a test module
        has hundreds of functions named ``f`` and as many ``jax.jit(f)`` (7,800 questions on
        jax's tests for ~1,300 uses)."""
        if not isinstance(expr, ast.Name):
            return []
        found = self._definitions_of.get(expr)
        if found is None:
            scope = self.scopes.binding_scope(expr)
            found = self._definitions_of[expr] = [
                d.node
                for d in self.scopes.definitions(scope).get(expr.id, [])
                if isinstance(d.node, (ast.FunctionDef, ast.AsyncFunctionDef))
            ]
        return found

    def _index(self) -> dict[str, dict[str, list[ast.AST]]]:
        """Calls by the name of their first argument, of their function, of their method; and
        every read of a bare name: one walk of the file, on first use."""
        if self._usage is None:
            index: dict[str, dict[str, list[ast.AST]]] = {"first": {}, "func": {}, "method": {}, "load": {}}
            for node in self.nodes:
                if isinstance(node, ast.Call):
                    if node.args and isinstance(node.args[0], ast.Name):
                        index["first"].setdefault(node.args[0].id, []).append(node)
                    if isinstance(node.func, ast.Name):
                        index["func"].setdefault(node.func.id, []).append(node)
                    elif isinstance(node.func, ast.Attribute):
                        index["method"].setdefault(node.func.attr, []).append(node)
                elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                    index["load"].setdefault(node.id, []).append(node)
            self._usage = index
        return self._usage

    def _uses(self, name: str) -> dict[str, list[ast.AST]]:
        """``_index()`` for one identifier: its ``first``, ``func``, ``method`` and ``load``
        lists, the same nodes in the same order.

        Most files ask about a few names only, and a full index walks every node of the file
        (most of JAX002's time on jax's own sources): the first few names asked are looked up
        in the statements whose lines hold the name (``_uses_near``), the rest in the index.
        """
        if self._usage is None and name:
            found = self._usage_by_name.get(name)
            if found is not None:
                return found
            if (
                len(self._usage_by_name) < _NAMES_BEFORE_INDEX
                and self._spelled_as_parsed
            ):
                lines = name_lines(self.ctx.text, name)
                # Names on many lines (``f`` in a test file) keep most statements: walks that
                # near the whole tree cost more than indexing it once.
                spent = self._near_lines + len(lines)
                if spent * _NEAR_SHARE <= self._line_count:
                    self._near_lines = spent
                    found = self._usage_by_name[name] = _uses_on_lines(self.ctx.tree, name, lines)
                    return found
        index = self._index()
        return {key: index[key].get(name, []) for key in _USE_KINDS}

    @cached_property
    def _line_count(self) -> int:
        return self.ctx.text.count("\n") + 1

    @cached_property
    def _spelled_as_parsed(self) -> bool:
        """Every identifier is in the text as the tree names it, on the line the tree says
        (``spelled_as_parsed``)."""
        return spelled_as_parsed(self.ctx.text)

    def _calls_passing(self, name: str) -> list[ast.Call]:
        return self._uses(name)["first"]

    def instance_names(self, cls: str) -> list[str]:
        """The names that statements `name = <cls>(...)` bind, in any scope (`bridge = ToTorch()`)."""
        return [
            parent.targets[0].id
            for made in self._uses(cls)["func"]
            if (parent := self.ctx.parent(made)).__class__ is ast.Assign
            and len(parent.targets) == 1
            and parent.targets[0].__class__ is ast.Name
        ]

    def _instance_calls(self, cls: ast.ClassDef) -> list[ast.Call]:
        """The file's calls of an instance of ``cls`` it makes there: at once (`ToTorch()(x)`)
        or through the name it is bound to (`bridge = ToTorch()`, `bridge(x)`)."""
        calls = [
            parent for made in self._uses(cls.name)["func"]
            if (parent := self.ctx.parent(made)).__class__ is ast.Call and parent.func is made
        ]
        for name in self.instance_names(cls.name):
            calls += self._uses(name)["func"]
        return [
            call for call in dict.fromkeys(calls)
            if (value := self.value_of(call.func)).kind == INSTANCE and value.node is cls
        ]

    def _argument_value(self, parameter: ast.arg, function: ast.AST) -> Value:
        """What the file's own calls of ``function`` pass for ``parameter``, joined; unknown
        unless every use of the function is such a call."""
        passed = self._passed_values(parameter, function)
        return join_paths(passed) if passed else UNKNOWN_VALUE

    def _passed_values(self, parameter: ast.arg, function: ast.AST) -> list[Value]:
        """``_argument_value``'s values, one per call (empty: unknown)."""
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or not all(
            _returns_its_argument(v, self._owner(v)) for v in map(self.value_of, function.decorator_list)
        ):
            return []
        owner = self.ctx.parent(function)
        positional = [*function.args.posonlyargs, *function.args.args]
        if isinstance(owner, ast.ClassDef) and function.name == "__init__":
            # Constructor calls; the class name also appears in annotations and isinstance checks.
            calls = [
                call
                for call in self._uses(owner.name)["func"]
                if self.value_of(call.func).kind == CLASS and self.value_of(call.func).node is owner
            ]
            positional = positional[1:]
        elif isinstance(owner, ast.ClassDef) and function.name == "__call__":
            calls = self._instance_calls(owner)
            positional = positional[1:]
        elif isinstance(owner, ast.ClassDef):
            calls = [
                call
                for call in self._uses(function.name)["method"]
                if self.value_of(call.func.value).kind == INSTANCE
                and self.value_of(call.func.value).node is owner
            ]
            positional = positional[1:]
        else:
            uses = self._uses(function.name)["load"]
            calls = [
                c
                for c in self._uses(function.name)["func"]
                if function in self._function_definitions(c.func)
            ]
            if len(calls) != len(uses):
                return []  # passed or stored somewhere: other callers are unknown
        if not calls:
            return []
        defaults = dict(
            zip([a.arg for a in reversed(positional)], reversed(function.args.defaults), strict=False)
        )
        defaults.update(
            (a.arg, d)
            for a, d in zip(function.args.kwonlyargs, function.args.kw_defaults, strict=True)
            if d is not None
        )
        values = []
        for call in calls:
            if any(isinstance(a, ast.Starred) for a in call.args) or any(
                k.arg is None for k in call.keywords
            ):
                return []
            argument = next((k.value for k in call.keywords if k.arg == parameter.arg), None)
            if argument is None and parameter in positional and positional.index(parameter) < len(call.args):
                argument = call.args[positional.index(parameter)]
            if argument is None:
                argument = defaults.get(parameter.arg)
            if argument is None:
                return []
            values.append(self.value_of(argument))
        several = [v.placement in (MULTI, NOT_ADDRESSABLE) for v in values]
        if any(several) and not all(several):
            # A call a test expects to fail (`with pytest.raises(BufferError):
            # to_torch(sharded)`) says nothing of what the function is given where it works
            # (asked only where it decides: ``join_paths`` would keep that call's array).
            expected = expected_errors_of(self.ctx)
            working = [value for value, call in zip(values, calls, strict=True) if not expected.expects_at(call)]
            values = working or values
        return values

    # Parameters ------------------------------------------------------------------------

    def parameter_value(self, parameter: ast.arg) -> Value:
        passed = self._parameters.get(parameter)
        if passed is not None:
            return passed
        function = function_of(self.ctx, parameter)
        if function is None:
            return UNKNOWN_VALUE
        arguments = function.args
        if parameter in (arguments.vararg, arguments.kwarg):
            return UNKNOWN_VALUE
        if self.tracing.traced_parameter(parameter, function):
            return Value(TRACER, f"a parameter of a traced function (`{parameter.arg}`)")
        if parameter.annotation is not None and not self._protocol(self.annotation_value(parameter.annotation)):
            annotated = self.annotation_value(parameter.annotation)
            if annotated.kind == INSTANCE:
                annotated = self._passed_instances(parameter, function, annotated)
            if annotated.kind != UNKNOWN:
                return replace(
                    annotated, why=f"a parameter annotated `{self.ctx.source_of(parameter.annotation)}`"
                )
        else:
            # Arrays and placements only: a constant some caller passes (a dl_device) says nothing
            # of what callers elsewhere pass, and a fix built on it could break them.
            passed = self._argument_value(parameter, function)
            if self._leaves(passed).kind in ARRAY_KINDS | OTHER_ARRAYS | {SHARDING, DEVICE, MESH}:
                return replace(passed, why=f"{passed.why}, passed to `{function.name}`" if passed.why else "")
            if passed.kind == INSTANCE and not isinstance(self.ctx.parent(function), ast.ClassDef):
                # Instances of one class of the file, every call's (`export(state)`): their
                # fields, as the calls made them (`state.params`).
                return self._passed_instance(parameter, function, passed)
        if self._registered_for_jax(parameter, function):
            return Value(ARRAY, "a function registered for `jax.Array`")
        owner = self.ctx.parent(function)
        positional = [*arguments.posonlyargs, *arguments.args]
        if (
            isinstance(owner, ast.ClassDef)
            and positional
            and positional[0] is parameter
            and not any(self.decorator_name(d) == "staticmethod" for d in function.decorator_list)
        ):
            if any(self.decorator_name(d) == "classmethod" for d in function.decorator_list):
                return Value(CLASS, f"class `{owner.name}`", node=owner, owner=self._here)
            return self._self_value(owner, function)
        mapped = self._mapped_parameter(parameter, function)
        if mapped is not None:
            return mapped
        return UNKNOWN_VALUE

    def _passed_instances(self, parameter: ast.arg, function: ast.AST, annotated: Value) -> Value:
        """A parameter annotated with a record class of the file (``def export(s: State)``):
        the instances the file's calls pass (``export(State(sharded))``), when every call
        passes one of that class; else what the annotation says (an instance, fields unknown).
        Not a method's: its calls on receivers the file does not know are not counted."""
        if annotated.node is None or self._record_fields(annotated.node) is None:
            return annotated
        if isinstance(self.ctx.parent(function), ast.ClassDef):
            return annotated
        passed = self._passed_values(parameter, function)
        complete = [self._complete_instance(v, annotated.node) for v in passed]
        if not complete or None in complete:
            return annotated
        return join_paths(complete)

    def _passed_instance(self, parameter: ast.arg, function: ast.AST, passed: Value) -> Value:
        """``passed``, joined from the file's calls of ``function``, where each passed an
        instance of the same class of this module; else unknown."""
        values = self._passed_values(parameter, function)
        cls = passed.node
        if not isinstance(cls, ast.ClassDef) or any(
            v.kind != INSTANCE or v.node is not cls or self._owner(v) is not self for v in values
        ):
            return UNKNOWN_VALUE
        return passed

    def _self_value(self, cls: ast.ClassDef, method: ast.AST) -> Value:
        """``self`` in a method of a record class (a NamedTuple, a dataclass): the instances the
        file reads the method of (``Batch(x=sharded).to_torch()``, ``f = batch.to_torch``), when
        each such read is on an instance of ``cls`` or on something known to be no instance of
        it; else any instance. A subclass's instances, or a dunder method that Python calls
        itself, could be ``self`` unseen: then any instance too."""
        plain = Value(INSTANCE, f"`{cls.name}`", node=cls, owner=self._here)
        if method.name.startswith("__") or self._record_fields(cls) is None or self._subclassed(cls):
            return plain
        found = self._self_values.get(method)
        if found is not None:
            return found
        self._self_values[method] = plain  # a method that reads itself on `self`
        try:
            instances = self._self_instances(cls, method)
        except _TooDeep:
            del self._self_values[method]
            raise
        found = self._self_values[method] = join_paths(instances) if instances else plain
        return found

    def _self_instances(self, cls: ast.ClassDef, method: ast.AST) -> list[Value]:
        """``_self_value``'s instances of ``cls`` read the method of; none when some read is on
        something that may be another instance."""
        instances = []
        for read in self._attribute_reads(method.name):
            receiver = self.value_of(read.value)
            if receiver.kind == INSTANCE and receiver.node is cls:
                instances.append(self._complete_instance(receiver, cls))
            elif receiver.kind in (MODULE, LIBRARY) or (
                receiver.kind in (INSTANCE, CLASS) and receiver.node not in (None, cls)
            ):
                continue  # another class's method of that name
            else:
                return []
        return instances

    def _complete_instance(self, value: Value, cls: ast.ClassDef) -> Value | None:
        """``value``, an instance of the record class ``cls``, with every field: a field its
        construction does not show (``State(*args)``, an annotated parameter) is what the class
        says of it, so that joined with other instances no field's claim rests on some of them
        only. None: ``value`` is no instance of ``cls`` held here."""
        if value.kind != INSTANCE or value.node is not cls or self._owner(value) is not self:
            return None
        shown = {key for key, _ in value.items}
        fields = self._record_fields(cls)
        missing = tuple((name, self._class_attribute(cls, name)) for name, _ in fields if name not in shown)
        return replace(value, items=value.items + missing) if missing else value

    def _subclassed(self, cls: ast.ClassDef) -> bool:
        """The file derives a class from ``cls`` (its name read among a class's bases)."""
        for name in self._uses(cls.name)["load"]:
            parent = self.ctx.parent(name)
            if isinstance(parent, ast.ClassDef) and name in parent.bases:
                return True
        return False

    def _attribute_reads(self, attr: str) -> list[ast.Attribute]:
        """The reads ``x.<attr>`` of the file (calls' callees among them): one walk, on first use."""
        if self._attribute_index is None:
            index: dict[str, list[ast.Attribute]] = {}
            for node in self.nodes:
                if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                    index.setdefault(node.attr, []).append(node)
            self._attribute_index = index
        return self._attribute_index.get(attr, [])

    def _mapped_parameter(self, parameter: ast.arg, function: ast.AST) -> Value | None:
        """A parameter of a function that ``jax.tree.map`` applies to a tree's leaves."""
        positional = [*function.args.posonlyargs, *function.args.args]
        if not positional or positional[0] is not parameter:
            return None
        calls = []
        if isinstance(function, ast.Lambda):
            parent = self.ctx.parent(function)
            if isinstance(parent, ast.Call) and parent.args and parent.args[0] is function:
                calls.append(parent)
        else:
            calls = [
                c
                for c in self._calls_passing(function.name)
                if function in self._function_definitions(c.args[0])
            ]
        trees = [
            call.args[1] for call in calls if len(call.args) > 1 and self.qualname(call.func) in api.TREE_MAPS
        ]
        if not trees or len(trees) != len(calls):
            return None
        return join_paths(self.leaves(tree) for tree in trees)

    def _registered_for_jax(self, parameter: ast.arg, function: ast.AST) -> bool:
        """The first parameter of ``@dispatcher.register(jax.Array)``."""
        positional = [*function.args.posonlyargs, *function.args.args]
        if not positional or positional[0] is not parameter:
            return False
        return any(
            isinstance(d, ast.Call)
            and isinstance(d.func, ast.Attribute)
            and d.func.attr == "register"
            and len(d.args) == 1
            and self.annotation_value(d.args[0]).kind == ARRAY
            for d in getattr(function, "decorator_list", ())
        )

    def _protocol(self, annotated: Value) -> bool:
        """Whether ``annotated`` (an annotation's value) is an instance of a `typing.Protocol`
        class of the project: it says only what the argument can do, so a parameter annotated
        with it is read as unannotated, from what the calls pass (issue 54: the Protocol hid the
        concrete class the calls pass)."""
        owner = self._owner(annotated) if annotated.kind == INSTANCE else None
        if owner is None or not isinstance(annotated.node, ast.ClassDef):
            return False
        return bool(classes_for(owner.ctx).library_bases(annotated.node) & _PROTOCOLS)

    def annotation_value(self, annotation: ast.AST) -> Value:
        """What a value annotated ``annotation`` is; base classes (``Sharding``) say little."""
        parsed = False
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            try:
                annotation = ast.parse(annotation.value, mode="eval").body
            except SyntaxError:
                return UNKNOWN_VALUE
            parsed = True  # nodes outside the tree: no scope resolves their names
        if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
            members = [m for m in (annotation.left, annotation.right) if not _is_none(m)]
            return join(self.annotation_value(m) for m in members) if members else UNKNOWN_VALUE
        if isinstance(annotation, ast.Subscript):
            head = self.qualname(annotation.value)
            if (
                head is None
                and isinstance(annotation.value, ast.Name)
                and not self.ctx.is_bound(annotation.value.id)
            ):
                head = annotation.value.id  # a builtin: dict[str, jax.Array]
            inner = annotation.slice
            members = inner.elts if isinstance(inner, ast.Tuple) else [inner]
            if head in MAPPING_TYPES and len(members) == 2:
                return Value(MAPPING, items=((None, self.annotation_value(members[1])),))
            if head in SEQUENCE_TYPES and members:
                elements = [m for m in members if not (isinstance(m, ast.Constant) and m.value is Ellipsis)]
                return Value(CONTAINER, items=tuple((None, self.annotation_value(m)) for m in elements))
            if head in ("typing.Optional", "typing_extensions.Optional"):
                return self.annotation_value(inner)
            if head in ("typing.Union",) and isinstance(inner, ast.Tuple):
                members = [m for m in inner.elts if not _is_none(m)]
                return join(self.annotation_value(m) for m in members)
            if head in ("typing.Annotated",) and isinstance(inner, ast.Tuple):
                return self.annotation_value(inner.elts[0])
            if head and head.startswith("jaxtyping.") and isinstance(inner, ast.Tuple) and inner.elts:
                return self.annotation_value(inner.elts[0])
            if head in NUMPY_TYPES:
                return Value(NUMPY)
            return UNKNOWN_VALUE
        if isinstance(annotation, ast.Name) and not parsed:
            # A class of this file (`batch: Batch`): its fields' annotations say what
            # `batch.obs` is, as a constructor call's arguments would.
            named = self.value_of(annotation)
            if named.kind == CLASS and named.node is not None:
                return Value(INSTANCE, f"`{named.node.name}`", node=named.node, owner=self._here)
        qualified = self.qualname(annotation)
        if qualified is None:
            return UNKNOWN_VALUE
        if qualified in JAX_ARRAY_TYPES:
            return Value(ARRAY)
        if qualified in TORCH_TYPES:
            return Value(TORCH)
        if qualified in NUMPY_TYPES:
            return Value(NUMPY)
        if qualified in CAPSULE_TYPES:
            return Value(CAPSULE, producer="parameter")
        if qualified in SHARDING_TYPES:
            return Value(SHARDING, placement=SHARDING_TYPES[qualified])
        if qualified in DEVICE_TYPES:
            return Value(DEVICE, placement=SINGLE)
        return UNKNOWN_VALUE

    # Narrowing -------------------------------------------------------------------------

    def _narrowed(self, name: ast.Name, reaching: list[Definition]) -> Value | None:
        """``isinstance(name, T)`` around the use, an early exit unless it holds, or ``case T():``;
        only while no definition after the check reaches the use."""
        found = self._narrowing(name)
        if found is None:
            return None
        value, check = found
        if any(d.bound_at > (check.lineno, check.col_offset) for d in reaching):
            return None
        return value

    def _narrowing(self, name: ast.Name) -> tuple[Value, ast.AST] | None:
        scope = self.scopes.scope_of(name)
        child: ast.AST = name
        chain = list(self.ctx.ancestors(name))
        for position, ancestor in enumerate(chain):
            if isinstance(ancestor, (ast.If, ast.IfExp, ast.While)) and child is not ancestor.test:
                body = ancestor.body if isinstance(ancestor.body, list) else [ancestor.body]
                found = self._isinstance_type(ancestor.test, name.id, negated=child not in body)
                if found is not None:
                    return found, ancestor.test
            if isinstance(ancestor, ast.match_case) and child is not ancestor.pattern:
                match = chain[position + 1]  # a match_case has no position: no parent lookup
                if isinstance(match.subject, ast.Name) and match.subject.id == name.id:
                    pattern = ancestor.pattern
                    if isinstance(pattern, ast.MatchAs) and pattern.pattern is not None:
                        pattern = pattern.pattern
                    if isinstance(pattern, ast.MatchClass):
                        found = self.annotation_value(pattern.cls)
                        if found.kind != UNKNOWN:
                            return replace(found, why=f"`case {self.ctx.source_of(pattern.cls)}()`"), pattern
            for block_name in ("body", "orelse", "finalbody"):
                block = getattr(ancestor, block_name, None)
                if not isinstance(block, list):
                    continue
                positions, exits = self._early_exits(block)
                index = positions.get(child)
                if index is None:
                    continue
                for position_of_exit, statement in exits:
                    if position_of_exit >= index:
                        break
                    found = self._isinstance_type(statement.test, name.id, negated=True)
                    if found is not None:
                        return found, statement
            if ancestor is scope:
                return None
            child = ancestor
        return None

    def _early_exits(self, block: list[ast.stmt]) -> tuple[dict[ast.AST, int], list[tuple[int, ast.If]]]:
        """The position of each statement of ``block``, and its ``if ...: return/raise/continue/
        break`` statements (no ``else``) in order: every use in a long block asks for them, so
        they are found once per block, not once per use."""
        found = self._blocks.get(id(block))
        if found is None:
            positions = {statement: index for index, statement in enumerate(block)}
            exits = [
                (index, statement)
                for index, statement in enumerate(block)
                if isinstance(statement, ast.If)
                and not statement.orelse
                and statement.body
                and isinstance(statement.body[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break))
            ]
            found = self._blocks[id(block)] = (positions, exits, block)
        return found[0], found[1]

    def _isinstance_type(self, test: ast.AST, ident: str, negated: bool = False) -> Value | None:
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return self._isinstance_type(test.operand, ident, not negated)
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or if negated else ast.And):
            for value in test.values:
                found = self._isinstance_type(value, ident, negated)
                if found is not None:
                    return found
            return None
        if negated:
            return None
        types = isinstance_classes(test, ident)
        if types is not None:
            found = join(self.annotation_value(t) for t in types)
            if found.kind != UNKNOWN:
                return replace(found, why="an `isinstance` check")
        return None

    # Attributes and subscripts ---------------------------------------------------------

    def _attribute_value(self, expr: ast.Attribute) -> Value:
        qualified = self.qualname(expr)
        if qualified is not None:
            return self._qualified_value(qualified)
        receiver = self.value_of(expr.value)
        return self.attribute_of(receiver, expr.attr, expr)

    def attribute_of(self, receiver: Value, attr: str, node: ast.AST | None = None) -> Value:
        kind = receiver.kind
        if kind in ARRAY_KINDS:
            if attr in ARRAY_ATTRIBUTES or attr == "at":
                return receiver
            if attr == "sharding":
                return Value(SHARDING, receiver.why, placement=receiver.placement)
            return UNKNOWN_VALUE
        if kind in OTHER_ARRAYS:
            return receiver if attr in ARRAY_ATTRIBUTES or attr in ("data", "grad") else UNKNOWN_VALUE
        if kind == INSTANCE:
            # Each instance the receiver may be (``join_paths``): one whose field spans several
            # devices is one on which the read sees it.
            fields = [v for k, v in receiver.items if k == attr]
            if fields:
                fields = [join_paths(fields)]
            if isinstance(node, ast.Attribute):
                # `e.arr = other` anywhere in the file: `e.arr` may be either.
                fields += self.stored_fields(node.value, attr, receiver)
            if fields:
                return join(fields)
            owner = self._owner(receiver)
            if receiver.node is not None and owner is not None:
                found = owner._class_attribute(receiver.node, attr)
                if found.kind == UNKNOWN and not owner._binds(receiver.node, attr):
                    found = owner._inherited_attribute(receiver.node, attr)
                return owner.arrived(found, self)
            return UNKNOWN_VALUE
        if kind == CLASS and receiver.node is not None:
            owner = self._owner(receiver)
            if owner is None:
                return UNKNOWN_VALUE
            return owner.arrived(owner._class_attribute(receiver.node, attr, instance=False), self)
        if kind == MODULE and receiver.qualname:
            return self._qualified_value(canonical(f"{receiver.qualname}.{attr}"))
        return UNKNOWN_VALUE

    def _inherited_attribute(self, cls: ast.ClassDef, attr: str) -> Value:
        """``attr`` of an instance of ``cls`` that its own body and methods do not bind: what the
        first base of its method resolution order that does (a method, a field its `__init__`
        sets) gives, in the module that defines that base, this one or another of the project
        (``Classes.mro``: the bases as imported). Issue 54: `Child().shard(x)` with `shard`
        defined by a base class was unknown, in one module as across them."""
        classes = classes_for(self.ctx)
        if not isinstance(cls, ast.ClassDef) or not cls.bases:
            return UNKNOWN_VALUE
        for entry in classes.mro(cls)[1:]:
            place = classes._place(entry)
            if place is None:
                return UNKNOWN_VALUE  # a library base: what it binds is not this file's to say
            ctx, base = place
            analysis = ctx.analysis
            if analysis._binds(base, attr):
                return analysis.arrived(analysis._class_attribute(base, attr), self)
        return UNKNOWN_VALUE

    def _binds(self, cls: ast.ClassDef, attr: str) -> bool:
        """Whether ``cls`` itself binds ``attr`` for its instances: in its body, or as
        `self.<attr> = ...` in one of its methods (what it binds hides its bases' ``attr``)."""
        if attr in classes_for(self.ctx)._members_of(cls):
            return True
        for method in cls.body:
            if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
                positional = [*method.args.posonlyargs, *method.args.args]
                if positional and attr in self._self_assignments(method, positional[0].arg):
                    return True
        return False

    def _property_accessor(self, function: ast.AST) -> str | None:
        """"getter" for a method that is a property's getter alone (`@property`,
        `@functools.cached_property`, `@<name>.getter`), "other" for its setter or deleter (no
        value of the attribute), None for anything else (a method, or other decorators too)."""
        if isinstance(function, ast.AsyncFunctionDef) or len(function.decorator_list) != 1:
            return None
        decorator = function.decorator_list[0]
        if self.decorator_name(decorator) in ("property", "functools.cached_property"):
            return "getter"
        if isinstance(decorator, ast.Attribute) and isinstance(decorator.value, ast.Name) and decorator.value.id == function.name:
            return "getter" if decorator.attr == "getter" else "other" if decorator.attr in ("setter", "deleter") else None
        return None

    def stored_fields(self, receiver: ast.AST, attr: str, instance: Value | None = None) -> list[Value]:
        """What the file stores in ``<receiver>.<attr>`` (``receiver`` a name), anywhere: an
        instance's field written after it was built (``e.arr = np.ones(3)``). An augmented or
        unpacking store is unknown. The stores in the class of ``instance`` itself (``self.arr =
        arr`` in ``__init__``) are what its fields already say."""
        if not isinstance(receiver, ast.Name):
            return []
        # Most fields are never stored to from outside: the text says so before any walk (a
        # spelling that only may be a store, `f(e.arr, 1)`, costs the walk, never an answer).
        if not any(
            not (m.start() and (self.ctx.text[m.start() - 1].isalnum() or self.ctx.text[m.start() - 1] in "_."))
            for m in re.finditer(
                rf"{re.escape(receiver.id)}\s*\.\s*{re.escape(attr)}\b\s*(?:[-+*/%&|^@<>]{{0,2}}=(?!=)|[:,]|in\b)",
                self.ctx.text,
            )
        ):
            return []
        cls = instance.node if instance is not None and instance.owner in (None, self._here) else None
        index = self._field_stores
        if index is None:
            index = self._field_stores = {}
            # Statements only (no store is an expression's but a walrus's, which binds a name).
            for statement in statements(self.ctx.tree.body, into_classes=True, into_functions=True):
                if isinstance(statement, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                    targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
                    for target in targets:
                        if target.__class__ is ast.Name:
                            continue  # (most targets: no attribute in them)
                        for part in ast.walk(target):
                            if isinstance(part, ast.Attribute) and isinstance(part.value, ast.Name):
                                exact = isinstance(statement, ast.Assign) and target is part
                                value = statement.value if exact else None
                                index.setdefault((part.value.id, part.attr), []).append((statement, value))
                elif isinstance(statement, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith)):
                    targets = (
                        [statement.target]
                        if isinstance(statement, (ast.For, ast.AsyncFor))
                        else [i.optional_vars for i in statement.items if i.optional_vars is not None]
                    )
                    for target in targets:
                        if target.__class__ is ast.Name:
                            continue  # (most targets: no attribute in them)
                        for part in ast.walk(target):
                            if isinstance(part, ast.Attribute) and isinstance(part.value, ast.Name):
                                index.setdefault((part.value.id, part.attr), []).append((statement, None))
        stored = index.get((receiver.id, attr))
        if not stored:
            return []
        if isinstance(cls, ast.ClassDef):
            stored = [(s, v) for s, v in stored if not cls.lineno <= s.lineno <= cls.end_lineno]
        # Only where the name is the same variable: its own scope (an `e` of another function is
        # another `e`).
        scope = self.scopes.scope_of(receiver)
        stored = [(s, v) for s, v in stored if self.scopes.scope_of(s) is scope]
        return [UNKNOWN_VALUE if value is None else self.value_of(value) for _, value in stored]

    def _class_attribute(self, cls: ast.ClassDef, attr: str, instance: bool = True) -> Value:
        """``self.attr``: what the class body and its methods assign to it, joined. An update
        from the field itself (``self.state = self.state + action``) is read with the field as
        the other assignments make it (one round of a fixed point: a placement the update keeps
        stays, one it changes joins in)."""
        key = (cls, attr, instance)
        memo = self._class_attributes
        if key in memo:
            return memo[key]
        memo[key] = UNKNOWN_VALUE  # a cycle before the first round answers nothing
        try:
            found = memo[key] = self._class_attribute_read(cls, attr, instance, key)
        except _TooDeep:
            del memo[key]
            raise
        return found

    def _class_attribute_read(self, cls: ast.ClassDef, attr: str, instance: bool, key: tuple) -> Value:
        """``_class_attribute``'s answer, computed (it memoizes it under ``key``)."""
        memo = self._class_attributes
        known: list[Value] = []
        assigned: list[ast.expr] = []
        # A method assigns ``self.<attr>`` only where its lines spell ``attr``.
        lines = name_lines(self.ctx.text, attr) if instance and self._spelled_as_parsed else None
        for statement in cls.body:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if statement.name == attr:
                    accessor = self._property_accessor(statement) if instance else None
                    if accessor == "getter":
                        # `@property def batch(self): return jax.device_put(...)`: reading
                        # `obj.batch` runs it.
                        returned = self.returns_of(statement)
                        spelled = f"`{statement.name}()`"
                        if returned.why.startswith(spelled):
                            returned = replace(returned, why=f"the property `{statement.name}`{returned.why[len(spelled):]}")
                        known.append(returned)
                    elif accessor is None:
                        known.append(self._function_value(statement))
                    continue
                if not instance:
                    continue
                if lines is not None:
                    at = bisect.bisect_left(lines, statement.lineno)
                    if at == len(lines) or lines[at] > statement.end_lineno:
                        continue
                positional = [*statement.args.posonlyargs, *statement.args.args]
                if not positional:
                    continue
                assigned += self._self_assignments(statement, positional[0].arg).get(attr, ())
            elif isinstance(statement, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == attr for t in statement.targets
            ):
                assigned.append(statement.value)
            elif (
                isinstance(statement, ast.AnnAssign)
                and isinstance(statement.target, ast.Name)
                and statement.target.id == attr
            ):
                if statement.value is None:
                    annotated = self.annotation_value(statement.annotation)
                    source = self.ctx.source_of(statement.annotation)
                    known.append(replace(annotated, why=annotated.why or f"`{cls.name}.{attr}: {source}`"))
                else:
                    assigned.append(statement.value)
        updates = [e for e in assigned if _reads_attribute(e, attr)]
        values = known + [
            self._with_field_writes(cls, attr, e) if e.__class__ in (ast.List, ast.Dict) else self.value_of(e)
            for e in assigned if not any(e is u for u in updates)
        ]
        if updates:
            memo[key] = _field_join(values)
            values += [self.value_of(e) for e in updates]
        return _field_join(values)

    def _with_field_writes(self, cls: ast.ClassDef, attr: str, display: ast.expr) -> Value:
        """A list or dict display a method assigns to `self.<attr>`, with what the class's
        methods write into `self.<attr>` (``_written``: `self.items.append(placed)`)."""
        value = self.value_of(display)
        if value.kind not in (CONTAINER, MAPPING) or not any(f".{attr}{w}" in self.ctx.text for w in _WRITE_SPELLINGS):
            return value
        loads = []
        for method in cls.body:
            positional = [*method.args.posonlyargs, *method.args.args] if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) else []
            if not positional:
                continue
            this = positional[0].arg
            loads += [
                node for node in scope_nodes(method)
                if node.__class__ is ast.Attribute
                and node.attr == attr
                and node.value.__class__ is ast.Name
                and node.value.id == this
                and node.ctx.__class__ is ast.Load
            ]
        return self._written_into(value, loads)

    def _self_assignments(self, method: ast.AST, this: str) -> dict[str, list[ast.expr]]:
        """What ``method`` assigns to ``this.<attr>``, by attr, in ``scope_nodes``' order (one
        value per target): one walk of the method for all the attributes asked about."""
        found = self._assigned_attributes.get(method)
        if found is None:
            found = self._assigned_attributes[method] = {}
            for node in scope_nodes(method):
                if isinstance(node, ast.Assign):
                    targets = node.targets
                elif isinstance(node, ast.AnnAssign) and node.value is not None:
                    targets = [node.target]
                else:
                    continue
                for target in targets:
                    if (
                        isinstance(target, ast.Attribute)
                        and isinstance(target.value, ast.Name)
                        and target.value.id == this
                    ):
                        found.setdefault(target.attr, []).append(node.value)
        return found

    def _subscript_value(self, expr: ast.Subscript) -> Value:
        receiver = self.value_of(expr.value)
        if receiver.kind == INSTANCE:
            # `dataset[i]`: what its class's own `__getitem__` returns (a NamedTuple's fields else).
            found = self._item_of(receiver)
            if found is not None:
                return found
        if receiver.kind in (CONTAINER, MAPPING, INSTANCE):
            key = expr.slice
            if isinstance(key, ast.Constant):
                return receiver.element(key.value)
            if isinstance(key, ast.Slice):
                return receiver
            return receiver.element(None)
        if receiver.kind in ARRAY_KINDS | OTHER_ARRAYS:
            return receiver
        return UNKNOWN_VALUE

    def _iterated(self, value: Value) -> Value:
        """One element of iterating ``value``: a dict's keys, a list's items, an array's rows,
        what an instance's own ``__iter__`` gives (``_instance_iterated``)."""
        if value.kind == MAPPING:
            return UNKNOWN_VALUE
        if value.kind == INSTANCE:
            found = self._instance_iterated(value)
            if found is not None:
                return found
        return value.element(None)

    def _instance_iterated(self, instance: Value) -> Value | None:
        """An element of iterating an instance of a class of the project that defines how
        (`for batch in loader:` with `def __iter__(self): yield jax.device_put(...)`, here or in
        another module): what its `__iter__` (or `__aiter__`) yields, or the elements of the
        iterable it returns, or, where it returns the instance itself, what `__next__` (or
        `__anext__`) returns. None when its class defines none of them (a NamedTuple's fields
        are its elements)."""
        for name, following in (("__iter__", "__next__"), ("__aiter__", "__anext__")):
            method = self._iteration_method(instance, name)
            if method is not None:
                break
        else:
            # The sequence protocol: `for x in dataset` calls `__getitem__(0)`, `(1)`, ...
            return self._item_of(instance)
        owner, function = method
        returned = owner.returns_of(function)
        if returned.kind not in (UNKNOWN, INSTANCE):
            # Iterated where it is made: an element from another module is located there.
            return owner.arrived(owner._iterated(returned), self, function.lineno)
        # `return self` (an iterator of itself): each element is what `__next__` returns.
        method = self._iteration_method(instance, following)
        if method is None:
            return UNKNOWN_VALUE
        owner, function = method
        return owner.arrived(owner.returns_of(function), self, function.lineno)

    def _item_of(self, instance: Value) -> Value | None:
        """What the `__getitem__` of ``instance``'s class returns (any index), located where it
        is defined; None when its class defines none."""
        method = self._iteration_method(instance, "__getitem__")
        if method is None or isinstance(method[1], ast.AsyncFunctionDef):
            return None
        owner, function = method
        return owner.arrived(owner.returns_of(function), self, function.lineno)

    def _iteration_method(self, instance: Value, name: str) -> tuple[Analysis, ast.AST] | None:
        """The undecorated method ``name`` of ``instance``'s class (through its project bases),
        an `async def` included (`__aiter__` as an async generator, `__anext__`)."""
        found = self._class_member(instance, name, plain=False)
        if found is None:
            return None
        ctx, function = found
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or function.decorator_list:
            return None
        return ctx.analysis, function

    def _class_member(self, instance: Value, name: str, plain: bool = True):
        """(context, statement) binding ``name`` for ``instance``, through its class's project
        bases: a plain method (``Classes.method``), or any binding (``plain=False``)."""
        owner = self._owner(instance)
        if owner is None or not isinstance(instance.node, ast.ClassDef):
            return None
        classes = classes_for(owner.ctx)
        return classes.method(instance.node, name) if plain else classes.resolve(instance.node, name)

    @staticmethod
    def leaf_values(value: Value, depth: int = 0) -> list[Value]:
        """The leaves of a container, mapping or record whose items are known, one by one (a
        consumer mapped over them raises at any one that cannot be exported)."""
        if value.kind in (CONTAINER, MAPPING, INSTANCE) and depth < 8:
            return [leaf for _, item in value.items for leaf in Analysis.leaf_values(item, depth + 1)]
        return [value]

    def _leaves(self, value: Value, depth: int = 0) -> Value:
        if value.kind in (CONTAINER, MAPPING, INSTANCE) and depth < 8:
            return join(self._leaves(v, depth + 1) for _, v in value.items)
        return value

    # Calls -----------------------------------------------------------------------------

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

    def specialized(self, parameters: dict[ast.arg, Value]) -> Analysis:
        """This analysis with ``parameters`` (of one function) bound to the values one call
        passes: what the file's structure says is shared, no value found before is (each may
        rest on a parameter)."""
        child = copy.copy(self)
        child._parameters = parameters
        child._values = {}
        child._active = set()
        child._returns = {}
        child._self_values = {}
        child._class_attributes = {}
        return child

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

    def _sharding_placement(self, value: Value) -> str:
        if value.kind in (SHARDING, DEVICE):
            return value.placement
        if value.kind == PARTITION_SPEC:
            return MULTI
        return PLACEMENT_UNKNOWN

    def _instance(self, cls: ast.ClassDef, call: ast.Call, caller: Analysis | None = None) -> Value:
        """An instance of ``cls`` (this file's class) made by ``call`` (in ``caller``'s file)."""
        caller = caller or self
        fields = self._record_fields(cls)
        items = []
        if fields is not None:
            names = [name for name, _ in fields]
            given: dict[str, ast.AST] = {}
            for index, argument in enumerate(call.args):
                if isinstance(argument, ast.Starred):
                    given = {}
                    break
                if index < len(names):
                    given[names[index]] = argument
            for keyword in call.keywords:
                if keyword.arg is not None:
                    given[keyword.arg] = keyword.value
            for name, default in fields:
                if name in given:
                    items.append((name, caller.value_of(given[name])))
                elif default is not None:
                    items.append((name, self.value_of(default)))
        else:
            init = next(
                (s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None
            )
            if init is not None:
                items = self._init_fields(init, call, caller)
        return Value(INSTANCE, f"`{cls.name}`", items=tuple(items), node=cls, owner=self._here)

    def _init_fields(self, init: ast.FunctionDef, call: ast.Call, caller: Analysis) -> list:
        """``self.x = x`` in ``__init__``: the constructor's argument for ``x``."""
        positional = [a.arg for a in [*init.args.posonlyargs, *init.args.args]][1:]
        given: dict[str, ast.AST] = {}
        for index, argument in enumerate(call.args):
            if isinstance(argument, ast.Starred):
                return []
            if index < len(positional):
                given[positional[index]] = argument
        given.update({k.arg: k.value for k in call.keywords if k.arg is not None})
        this = init.args.args[0].arg if init.args.args else None
        items = []
        for statement in init.body:
            if (
                isinstance(statement, ast.Assign)
                and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Attribute)
                and isinstance(statement.targets[0].value, ast.Name)
                and statement.targets[0].value.id == this
                and isinstance(statement.value, ast.Name)
                and statement.value.id in given
            ):
                items.append((statement.targets[0].attr, caller.value_of(given[statement.value.id])))
        return items

    def _record_fields(self, cls: ast.ClassDef) -> list[tuple[str, ast.AST | None]] | None:
        """The fields of a dataclass or NamedTuple, in order; None for other classes."""
        record = any(
            (self.qualname(d.func if isinstance(d, ast.Call) else d) or "").endswith("dataclass")
            for d in cls.decorator_list
        ) or any(
            (self.qualname(base) or "") in ("typing.NamedTuple", "flax.struct.PyTreeNode")
            or (self.qualname(base) or "").endswith(".NamedTuple")
            for base in cls.bases
        )
        if not record:
            return None
        return [
            (statement.target.id, statement.value)
            for statement in cls.body
            if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)
        ]

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

    def _is_parameter(self, expr: ast.AST) -> bool:
        if not isinstance(expr, ast.Name):
            return False
        reaching, _complete = self.scopes.reaching(expr)
        if reaching:
            return False
        parameter = self.scopes.parameter(expr.id, self.scopes.scope_of(expr))
        return parameter is not None

    # The project's other modules (issue 34) ------------------------------------------

    def foreign_callee(self, call: ast.Call) -> tuple[Analysis, ast.AST, bool] | None:
        """The function or method of another module of the project that ``call`` runs: (that
        module's analysis, its ``def``, whether the call binds its first parameter, as a method
        called on an instance does); None for anything else (this file's functions included:
        their parameters are followed from their callers here)."""
        func = call.func
        if not isinstance(func, (ast.Name, ast.Attribute)):
            return None
        callee = self.value_of(func)
        if callee.kind != FUNCTION or callee.owner is None or callee.owner == self._here:
            return None
        return self._function_callee(func, callee)

    def _function_callee(self, func: ast.expr, callee: Value) -> tuple[Analysis, ast.AST, bool] | None:
        owner = self._owner(callee)
        function = callee.node
        if owner is None or not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        if any(owner._caches(d) for d in function.decorator_list):
            # A cached function hashes its arguments first (a JAX array, a tracer: TypeError):
            # what it returns is known, what it does with an argument is not followed.
            return None
        bound = False
        if isinstance(func, ast.Attribute) and isinstance(owner.ctx.parent(function), ast.ClassDef):
            decorators = {owner.decorator_name(d) for d in function.decorator_list}
            if "classmethod" in decorators:
                bound = True
            elif "staticmethod" not in decorators:
                bound = self.value_of(func.value).kind == INSTANCE
        return owner, function, bound

    def callee(self, call: ast.Call) -> Callee | None:
        """The function or method of the project (this module's or another's) that ``call``
        runs, with what it passes: a function (`helper(x)`, `interop.to_host(x)`), a method of
        an instance (`model.encode(x)`, `Model().encode(x)`), an instance's `__call__`
        (`model(x)`), and the method a library base class's method runs on the instance
        (``api`` ``applies``: flax's `model.apply(variables, x, method=Model.encode)` runs
        `encode(x)`, without `method=` `__call__`). None for anything else."""
        func = call.func
        if not isinstance(func, (ast.Name, ast.Attribute, ast.Call)):
            return None
        value = self.value_of(func)
        if value.kind == FUNCTION and value.node is not None and not isinstance(func, ast.Call):
            found = self._function_callee(func, value)
            return Callee(*found, call.args, call.keywords) if found is not None else None
        if value.kind == INSTANCE:
            return self._method_callee(value, "__call__", call.args, call.keywords)
        if isinstance(func, ast.Attribute) and func.attr in _APPLIERS and call.args:
            receiver = self.value_of(func.value)
            if receiver.kind == INSTANCE:
                return self._applied_callee(receiver, func.attr, call)
        return None

    def _method_callee(self, instance: Value, name: str, args, keywords) -> Callee | None:
        """The plain method ``name`` of ``instance``'s class (through its project bases)."""
        found = self._class_member(instance, name)
        if found is None:
            return None
        ctx, function = found
        return Callee(ctx.analysis, function, True, list(args), list(keywords))

    def instance_call(self, expr: ast.AST) -> Callee | None:
        """The `__call__` that ``expr``, an instance of a class of the project, runs when it is
        called (`jax.vmap(model)(xs)`): it gets the call's arguments."""
        if not isinstance(expr, (ast.Name, ast.Attribute, ast.Call)):
            return None
        value = self.value_of(expr)
        return self._method_callee(value, "__call__", [], []) if value.kind == INSTANCE else None

    def applied_method(self, expr: ast.AST) -> Callee | None:
        """The method that ``expr``, a library base class's ``applies`` method of an instance
        (`model.apply`, not called: `jax.jit(model.apply)`), runs when called without `method=`:
        its `__call__`, which gets the call's arguments after the first (the variables)."""
        if not isinstance(expr, ast.Attribute) or expr.attr not in _APPLIERS:
            return None
        receiver = self.value_of(expr.value)
        if receiver.kind != INSTANCE or self._apply_options(receiver, expr.attr) is None:
            return None
        return self._method_callee(receiver, "__call__", [], [])

    def _apply_options(self, instance: Value, applier: str) -> tuple[str, ...] | None:
        """The keywords of the library method ``applier`` by which ``instance``'s class runs its
        own methods (``_APPLIERS``); None when its class has no such base, or defines
        ``applier`` itself."""
        owner = self._owner(instance)
        cls = instance.node
        if owner is None or not isinstance(cls, ast.ClassDef):
            return None
        classes = classes_for(owner.ctx)
        if classes.resolve(cls, applier) is not None:
            return None  # the project's own `apply`: a method like any other
        bases = classes.library_bases(cls)
        return next((options for name, options in _APPLIERS[applier].items() if name in bases), None)

    def _applied_callee(self, instance: Value, applier: str, call: ast.Call) -> Callee | None:
        options = self._apply_options(instance, applier)
        if options is None or isinstance(call.args[0], ast.Starred):
            return None  # `model.apply(*args)`: which argument is the variables is not known
        method = "__call__"
        for keyword in call.keywords:
            if keyword.arg == "method":
                chosen = keyword.value
                if isinstance(chosen, ast.Constant) and isinstance(chosen.value, str):
                    method = chosen.value
                elif isinstance(chosen, ast.Attribute):
                    method = chosen.attr  # `Model.encode`, `self.encode`: looked up on the instance
                else:
                    return None  # a function or an expression: what runs is not known here
        keywords = [k for k in call.keywords if k.arg not in options]
        return self._method_callee(instance, method, call.args[1:], keywords)

    def parameter_source(self, expr: ast.AST) -> ast.arg | None:
        """The parameter ``expr`` holds as its function received it: the parameter's name, or a
        local name bound only to it (``y = x``), never rebound in between."""
        for _ in range(8):
            if not isinstance(expr, ast.Name):
                return None
            reaching, complete = self.scopes.reaching(expr)
            if not reaching:
                return self.scopes.parameter(expr.id, self.scopes.scope_of(expr))
            if len(reaching) != 1 or not complete or reaching[0].path or not isinstance(reaching[0].value, ast.Name):
                return None
            expr = reaching[0].value
        return None


    @cached_property
    def _here(self) -> str | None:
        """This module's path under its project root: the owner of the values made here."""
        return self.ctx.root_path

    def _owner(self, value: Value) -> Analysis | None:
        """The analysis that holds ``value``'s nodes: this one, or another module's of the
        project (None when that module is no longer readable for this file)."""
        if value.owner is None or value.owner == self._here:
            return self
        project = self.ctx.project
        other = project.context(value.owner) if project is not None else None
        return other.analysis if other is not None else None

    def arrived(self, value: Value, asking: Analysis, line: int | None = None) -> Value:
        """``value``, as this module's analysis found it, handed to ``asking`` (the module that
        asked): marked as held here, and its reason located here (``line``: where it is made) for
        a finding's message."""
        if asking is self:
            return value
        if value.owner is None and (value.node is not None or value.transform is not None):
            value = replace(value, owner=self._here)
        return self._located(value, line, 0)

    def _located(self, value: Value, line: int | None, depth: int) -> Value:
        """``value`` with its reason, and those of the items it holds, located in this module."""
        if value.why and value.kind in _LOCATED and "` line " not in value.why and f"in `{self._here}`" not in value.why:
            where = f"`{self._here}` line {line}" if line else f"`{self._here}`"
            value = replace(value, why=f"{value.why}, in {where}")
        if value.kind in (CONTAINER, MAPPING) and value.items and depth < 3:
            items = tuple((key, self._located(item, None, depth + 1)) for key, item in value.items)
            if any(new is not old for (_, new), (_, old) in zip(items, value.items)):
                value = replace(value, items=items)
        return value

    def _project_value(self, qualified: str) -> Value | None:
        """What ``qualified`` is, when it names something in another module of the project:
        that module's own answer (None: not the project's, the caller judges it as a library)."""
        project = self.ctx.project
        found = project.module_of(qualified, self._here)
        if found is None:
            return None
        path, rest = found
        if not rest:
            return Value(MODULE, qualname=qualified)  # a module of the project: nothing to parse
        # A re-export (`from .core import f` in a package's `__init__`) is followed from the text:
        # the module that defines the name is the only one parsed.
        for _ in range(MAX_REEXPORTS):
            target = project.reexport(path, rest[0])
            if target is None:
                break
            name = ".".join([target, *rest[1:]])
            moved = project.module_of(name, path)
            if moved is None:  # re-exported from a library: judged as that library's name
                return self._qualified_value(canonical(name))
            path, rest = moved
            if not rest:
                return Value(MODULE, qualname=name)
        guard = project.asking(path)
        other = project.context(path) if guard is not None else None
        if other is None:
            return UNKNOWN_VALUE
        with guard:
            analysis = other.analysis
            definitions = analysis.scopes.definitions(other.tree).get(rest[0], [])
            value = join(analysis._definition_value(d) for d in definitions) if definitions else UNKNOWN_VALUE
            for attr in rest[1:]:
                value = analysis.attribute_of(value, attr)
            line = getattr(definitions[-1].node, "lineno", None) if definitions and len(rest) == 1 else None
            return analysis.arrived(value, self, line)

    def _qualified_value(self, qualified: str) -> Value:
        if self.ctx.project is not None:
            found = self._project_value(qualified)
            if found is not None:
                return found
        if qualified in WRAPPING_TRANSFORMS or qualified in TRACING_TRANSFORMS:
            return Value(TRANSFORM, f"`{qualified}`", transform=Transform(qualified, why=""))
        owner, _, member = qualified.rpartition(".")
        if owner.rpartition(".")[2] == "DLDeviceType" and member in DL_DEVICE_TYPES:
            return Value(DEVICE_TYPE, f"`{qualified}`", constant=DL_DEVICE_TYPES[member], qualname=qualified)
        if "." not in qualified or _is_module_name(qualified):
            return Value(MODULE, qualname=qualified)
        return Value(LIBRARY, f"`{qualified}`", qualname=qualified)

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


# Builtins that step through an iterable (`next(batches())`), unless the file rebinds them.
_ITERATION_BUILTINS = frozenset({"next", "iter"})
_DTYPE_POSITIONS = {
    "jax.lax.convert_element_type": 1,
    "jax.lax._convert_element_type": 1,
    "jax.lax.bitcast_convert_type": 1,
    "jax.numpy.astype": 1,
}
_DTYPE_KEYWORDS = frozenset({"dtype", "new_dtype"})


def _returns_its_argument(decorator: Value, owner: Analysis | None) -> bool:
    """Whether ``decorator`` (a decorator's value) is a function of the project that returns the
    function it is given unchanged, as a registry's decorator does (`def deco(fn):
    REGISTRY[name] = fn; return fn`, what `@register("torch")` returns): every `return` of it
    returns its one parameter, and it yields nothing. Issue 54: such a decorator hid the
    function, so the calls of it were not followed into it."""
    function = decorator.node
    if decorator.kind != FUNCTION or owner is None or not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    positional = [*function.args.posonlyargs, *function.args.args]
    if isinstance(function, ast.AsyncFunctionDef) or function.decorator_list or len(positional) != 1:
        return False
    returns, name = [], positional[0].arg
    for node in scope_nodes(function):
        if isinstance(node, (ast.Yield, ast.YieldFrom)) or (
            isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load)
        ):
            return False  # a generator, or the parameter rebound (`fn = wraps(fn)(inner)`)
        if isinstance(node, ast.Return):
            returns.append(node)
    return bool(returns) and all(isinstance(r.value, ast.Name) and r.value.id == name for r in returns)


def _array_leaves(tree: Value, leaf: Value, depth: int) -> Value:
    """``tree`` with each of its arrays and tracers, however nested, ``leaf``; the rest kept."""
    if tree.kind in ARRAY_KINDS:
        return leaf
    if tree.kind not in (CONTAINER, MAPPING, INSTANCE) or depth > 8:
        return tree
    return replace(tree, items=tuple((key, _array_leaves(value, leaf, depth + 1)) for key, value in tree.items))


def _with_leaves(tree: Value, leaf: Value, depth: int = 0) -> Value:
    """``tree`` (a container, mapping or record) with every leaf ``leaf``."""
    if tree.kind not in (CONTAINER, MAPPING, INSTANCE) or depth > 8:
        return leaf
    return replace(tree, items=tuple((key, _with_leaves(value, leaf, depth + 1)) for key, value in tree.items))


def _reads_attribute(expr: ast.AST, attr: str) -> bool:
    return any(isinstance(node, ast.Attribute) and node.attr == attr for node in ast.walk(expr))


def _inspects(test: ast.expr, names: set[str]) -> bool:
    """Whether ``test`` looks into the value of one of ``names``: reads an attribute of it or
    passes it to a call (`len(x.sharding.device_set) > 1`, `is_sharded(x)`), not only `x is
    None` or `not x`."""
    for node in ast.walk(test):
        if node.__class__ is ast.Attribute and node.value.__class__ is ast.Name and node.value.id in names:
            return True
        if node.__class__ is ast.Call and any(
            a.__class__ is ast.Name and a.id in names for a in [*node.args, *(k.value for k in node.keywords)]
        ):
            return True
    return False


def _names_read(expr: ast.AST) -> set[str]:
    return {node.id for node in ast.walk(expr) if node.__class__ is ast.Name}


def _is_partial_put(value: Value) -> bool:
    """Whether ``value`` is ``functools.partial(jax.device_put, ...)`` (``_partial_call``)."""
    return value.kind == LIBRARY and value.qualname == "jax.device_put" and isinstance(value.node, ast.Call)


def _field_join(values: list[Value]) -> Value:
    """A field's values joined. `self.state = None` in `__init__`, set for real in `reset()`: a
    placeholder. What reads the field either gets the real value or fails on None whatever it
    is (a gather of None is None), so the placeholder does not weaken the claim."""
    real = [v for v in values if not (v.kind == CONSTANT and v.constant is None)]
    return join(real or values)


def _placement_free(value: Value) -> bool:
    """Host data, literals, dtypes and other libraries' arrays: values that cannot carry a
    sharding (issue 31: `jnp.array(cupy_array)` lands on one device, as from NumPy)."""
    if value.kind in (CONTAINER, MAPPING):
        return all(_placement_free(v) for _, v in value.items)
    return value.kind in (CONSTANT, LIBRARY) or value.kind in OTHER_ARRAYS


def _is_module_name(qualified: str) -> bool:
    return qualified in _KNOWN_MODULES


_KNOWN_MODULES = frozenset(
    {
        "jax.numpy",
        "jax.dlpack",
        "jax.lax",
        "jax.nn",
        "jax.random",
        "jax.sharding",
        "jax.experimental",
        "jax.experimental.pjit",
        "jax.experimental.multihost_utils",
        "jax.experimental.mesh_utils",
        "jax.tree_util",
        "jax.tree",
        "jax.scipy",
        "jax.typing",
        "torch.utils",
        "torch.utils.dlpack",
        "numpy.typing",
        "jax._src",
        "jax._src.dlpack",
    }
)


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


def _argument(call: ast.Call, position: int | None, keyword: str) -> ast.AST | None:
    for k in call.keywords:
        if k.arg == keyword:
            return k.value
    if (
        position is not None
        and len(call.args) > position
        and not any(isinstance(a, ast.Starred) for a in call.args[: position + 1])
    ):
        return call.args[position]
    return None


def _keyword_name(call: ast.Call, value: ast.AST) -> str:
    return next((k.arg for k in call.keywords if k.value is value), "device")


def _is_none(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _is_literal(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, (ast.List, ast.Tuple)):
        return all(_is_literal(e) for e in node.elts)
    return False


def analysis_for(ctx) -> Analysis:
    """The file's one analysis, however many rules ask (cached on the context)."""
    return ctx.analysis


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
