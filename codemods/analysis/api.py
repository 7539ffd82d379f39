"""The facts about library functions that the analysis and the rules judge calls by.

Each qualified name stands here once, as one record of what it does; a rule or analysis asks
for the names with the facts it cares about (``names(takes_arrays=True)``) instead of keeping
its own list, so two rules cannot judge the same call differently. A rule keeps only the tables
that are truly its own (JAX001's members of ``jax.core.Tracer``).

Names are the public spellings that ``names.canonical`` gives, unless ``public`` says which
public name a private or legacy spelling stands for (``names.canonical`` maps it so): a
resolver that does not canonicalise (``FileContext.qualname``) needs those spellings too.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

# What a call raises when it is given a tracer (JAX001 reports it).
CONCRETIZATION = "ConcretizationTypeError"
ARRAY_CONVERSION = "TracerArrayConversionError"
UNAVAILABLE = "AttributeError"  # JAX hides the attribute so that hasattr() stays False


@dataclass(frozen=True)
class Api:
    """One library function or class and its facts.

    ``takes_arrays``: a DLPack consumer that takes an object with ``__dlpack__`` and asks it for
    one buffer. ``takes_capsules``: a consumer that takes a DLPack ``PyCapsule``.
    ``makes_capsules``: a producer of a capsule, of its library's arrays. ``reads``: how a
    consumer reads a JAX array's memory (``analysis.platforms``: "dlpack-device", asking
    ``__dlpack_device__`` first; "dlpack", calling ``__dlpack__``; "buffer", the buffer protocol),
    which is what a platform refuses. ``single_device``:
    its result is a JAX array on one device. ``tracer_error``: what it raises given a tracer,
    because it needs a concrete buffer. ``tree``: a pytree helper, what it gives ("map": runs
    its function on the leaves; "leaves"/"flatten": the leaves, as a list or with the treedef;
    "leaves_with_path"/"flatten_with_path": each leaf with its path). ``transform``: a JAX
    (or equinox, flax) transform, how it runs the function it is given ("jit": traces every
    argument that is not static and keeps the function's calling convention, so a function it
    decorates can be split; "wraps": returns the function transformed; "calls": calls it at
    once), ``traced_args`` the positions of the functions it traces among the call's arguments
    and ``traced_by`` the option that says which of their arguments are traced;
    ``differentiates``: it only differentiates, so its tracers carry concrete primal values
    (checked against the installed JAX by tests/test_traced_concrete_access.py::
    test_differentiation_table_matches_installed_jax); ``multi_device``: what it makes is
    placed on several devices. ``keeps_tracers``: inside a trace it returns the tracers it is
    given as they are (a transfer or a wait: a tracer has no buffer to fetch, place or wait
    for), so what it returns there is no concrete array. ``host_copy``: outside a trace it
    returns a NumPy copy on the host. ``tracer_class``: True for the class of JAX's tracers,
    False for a host class no tracer is an instance of.
    ``applies``: a library base class whose instances' method of that name runs another method
    of the instance (flax linen's ``Module.apply(variables, *args, method=None, **kwargs)``
    runs ``method``, else ``__call__``, on the rest of the arguments), ``apply_options`` that
    method's own keywords (not passed on). ``public``: the public name a private or legacy spelling stands for.
    ``calls``: a higher-order call that runs one of its arguments with the others, at once or on
    another thread (``pool.submit(f, x)`` runs ``f(x)``): the position of the function and of
    its first argument (``analysis.higher_order``). A record named ``package.Class.method`` is a
    method of the library's class, known by its name on a receiver the file does not resolve.
    ``copies``: returns a copy of its first argument, of the same kind and placement
    (``copy.deepcopy`` of a sharded array, or of a tree of them, keeps each sharding).
    ``dlpack_conversion``: a conversion from any array-like that reads a JAX array through
    DLPack (torch 2.x's ``as_tensor`` and ``tensor``), so a multi-device one raises BufferError
    there as in ``from_dlpack`` (checked with torch 2.13 and JAX 0.10.2 on 4 CPU devices).
    ``protocol_array``: a capsule producer whose exported array -- its first argument
    ("argument") or, for a method, its receiver ("receiver") -- always has ``__dlpack__`` and
    ``__dlpack_device__``, so a consumer of the array protocol takes that array in the capsule's
    place: the call itself shows what the array is.
    """

    name: str
    takes_arrays: bool = False
    takes_capsules: bool = False
    makes_capsules: bool = False
    reads: str | None = None
    single_device: bool = False
    tracer_error: str | None = None
    tree: str | None = None
    creates: str | None = None
    static: bool = False
    array_type: str | None = None
    transform: str | None = None
    traced_args: tuple[int, ...] = ()
    traced_by: str | None = None
    differentiates: bool = False
    multi_device: bool = False
    applies: str | None = None
    apply_options: tuple[str, ...] = ()
    keeps_tracers: bool = False
    host_copy: bool = False
    tracer_class: bool | None = None
    public: str | None = None
    calls: tuple[int, int] | None = None
    copies: bool = False
    dlpack_conversion: bool = False
    protocol_array: str | None = None

    @property
    def library(self) -> str:
        """Whose it is: the top-level package (`torch`, `tensorflow`, ...)."""
        return self.name.split(".", 1)[0]


# Modules whose functions take and return JAX arrays (`jax.image.resize`): inside a trace, their
# results are tracers when an argument is.
ARRAY_MODULES = ("jax.numpy.", "jax.lax.", "jax.nn.", "jax.scipy.", "jax.random.", "jax.image.")

API: tuple[Api, ...] = (
    # DLPack ---------------------------------------------------------------------------
    # JAX's consumers take an array-protocol object and reject capsules (TypeError since 0.7.2:
    # that version question is removed_dlpack_api's); the result is on one device.
    # Given a JAX array they ask its __dlpack_device__ as torch does (jax/_src/dlpack.py).
    Api("jax.dlpack.from_dlpack", takes_arrays=True, single_device=True, reads="dlpack-device"),
    Api("jax.numpy.from_dlpack", takes_arrays=True, single_device=True, reads="dlpack-device"),
    Api(
        "jax._src.dlpack.from_dlpack",
        takes_arrays=True,
        single_device=True,
        reads="dlpack-device",
        public="jax.dlpack.from_dlpack",
    ),
    # to_dlpack (removed in 0.7) reads its array's memory as __dlpack__ does.
    Api("jax.dlpack.to_dlpack", makes_capsules=True, reads="dlpack"),
    Api("jax._src.dlpack.to_dlpack", makes_capsules=True, reads="dlpack", public="jax.dlpack.to_dlpack"),
    # torch reads __dlpack_device__ first (torch/utils/dlpack.py, torch/_tensor.py), and
    # takes a capsule as well.
    *(
        Api(
            name,
            takes_arrays=True,
            takes_capsules=True,
            reads="dlpack-device",
            tracer_error=UNAVAILABLE,
        )
        for name in ("torch.from_dlpack", "torch.utils.dlpack.from_dlpack")
    ),
    Api("torch.utils.dlpack.to_dlpack", makes_capsules=True),
    Api("torch.to_dlpack", makes_capsules=True, public="torch.utils.dlpack.to_dlpack"),
    Api(
        "numpy.from_dlpack", takes_arrays=True, reads="dlpack", tracer_error=CONCRETIZATION
    ),
    # CuPy takes __cuda_array_interface__ or __dlpack__ (a tracer has neither); its
    # `from_dlpack` still takes a legacy capsule, `fromDlpack` nothing else.
    Api(
        "cupy.from_dlpack",
        takes_arrays=True,
        takes_capsules=True,
        reads="dlpack",
        tracer_error=CONCRETIZATION,
    ),
    Api("cupy.fromDlpack", takes_capsules=True),
    # TensorFlow's consumer takes a capsule only (`from_dlpack(dlcapsule)`: "A PyCapsule named
    # as dltensor"), and many releases' tensors have no `__dlpack__` (tensorflow#61769).
    Api("tensorflow.experimental.dlpack.from_dlpack", takes_capsules=True),
    Api("tensorflow.experimental.dlpack.to_dlpack", makes_capsules=True),
    # Producers of arrays that have the protocol themselves: NVIDIA Warp's `to_dlpack(wp_array)`
    # (`warp.array.__dlpack__`/`__dlpack_device__`, warp/types.py in Warp 1.5; Warp's docs: pass
    # the Warp array to `jax.dlpack.from_dlpack` directly) and CuPy's `ndarray.toDlpack()`
    # (`cupy.ndarray` has both since CuPy 10; `cupy.from_dlpack` takes such an array). Not
    # TensorFlow's or Paddle's `to_dlpack`: many releases' tensors have no `__dlpack__`.
    Api("warp.to_dlpack", makes_capsules=True, protocol_array="argument"),
    Api("warp.dlpack.to_dlpack", makes_capsules=True, protocol_array="argument", public="warp.to_dlpack"),
    Api("cupy.ndarray.toDlpack", makes_capsules=True, protocol_array="receiver"),
    # Higher-order calls: each runs the function it is given with the arguments after it --
    Api("asyncio.to_thread", calls=(0, 1)),
    Api("concurrent.futures.Executor.submit", calls=(0, 1)),
    Api("asyncio.AbstractEventLoop.run_in_executor", calls=(1, 2)),
    # Copies: the same value again (checked with JAX 0.10.2: a sharded array's copy keeps it) --
    Api("copy.deepcopy", copies=True),
    Api("copy.copy", copies=True),
    # Pytrees: "map" runs its function on the leaves; the others give the leaves -------
    Api("jax.tree_util.tree_map", tree="map"),
    Api("jax.tree.map", tree="map", public="jax.tree_util.tree_map"),
    Api("jax.tree_map", tree="map", public="jax.tree_util.tree_map"),  # removed in JAX 0.6
    Api("jax.tree_util.tree_leaves", tree="leaves"),
    Api("jax.tree.leaves", tree="leaves", public="jax.tree_util.tree_leaves"),
    Api("jax.tree_leaves", tree="leaves", public="jax.tree_util.tree_leaves"),
    Api("jax.tree_util.tree_flatten", tree="flatten"),
    Api("jax.tree.flatten", tree="flatten", public="jax.tree_util.tree_flatten"),
    Api("jax.tree_flatten", tree="flatten", public="jax.tree_util.tree_flatten"),
    Api("jax.tree_util.tree_leaves_with_path", tree="leaves_with_path"),
    Api("jax.tree.leaves_with_path", tree="leaves_with_path", public="jax.tree_util.tree_leaves_with_path"),
    Api("jax.tree_util.tree_flatten_with_path", tree="flatten_with_path"),
    Api(
        "jax.tree.flatten_with_path", tree="flatten_with_path", public="jax.tree_util.tree_flatten_with_path"
    ),
    # Transfers and waits: inside a trace each returns its argument's tracers (jax/_src/api.py:
    # `_device_get` returns a `core.Tracer` as it is, `device_put` binds a primitive on it,
    # `block_until_ready` finds no buffer), and a NumPy conversion of the result still raises
    # (TracerArrayConversionError), on every supported release.
    Api("jax.device_get", keeps_tracers=True, host_copy=True),
    *(Api(name, keeps_tracers=True) for name in ("jax.device_put", "jax.block_until_ready")),
    Api("jax.experimental.multihost_utils.process_allgather", host_copy=True),
    # Transforms ---------------------------------------------------------------------
    *(
        Api(name, transform="jit", traced_args=(0,))
        for name in ("jax.jit", "jax.experimental.pjit.pjit", "equinox.filter_jit", "flax.nnx.jit")
    ),
    Api("jax.vmap", transform="wraps", traced_args=(0,), traced_by="in_axes"),
    Api("jax.pmap", transform="wraps", traced_args=(0,), multi_device=True),  # traced like jit, whatever in_axes says
    *(
        Api(f"jax.{name}", transform="wraps", traced_args=(0,), traced_by="argnums", differentiates=True)
        for name in ("grad", "value_and_grad", "jacfwd", "jacrev", "hessian")
    ),
    Api("jax.checkpoint", transform="wraps", traced_args=(0,)),
    Api("jax.remat", transform="wraps", traced_args=(0,), public="jax.checkpoint"),
    Api("jax.shard_map", transform="wraps", traced_args=(0,), multi_device=True),
    *(
        Api(f"jax.{name}", transform="calls", traced_args=(0,), differentiates=True)
        for name in ("jvp", "vjp", "linearize")
    ),
    *(
        Api(f"jax.lax.{name}", transform="calls", traced_args=(0,))
        for name in ("scan", "map", "associative_scan")
    ),
    Api("jax.lax.while_loop", transform="calls", traced_args=(0, 1)),
    Api("jax.lax.fori_loop", transform="calls", traced_args=(2,)),
    Api("jax.lax.cond", transform="calls", traced_args=(1, 2)),
    Api("jax.lax.switch", transform="calls", traced_args=(1,)),
    Api("equinox.filter_vmap", transform="wraps", traced_args=(0,), traced_by="in_axes"),
    Api("equinox.filter_pmap", transform="wraps", traced_args=(0,)),
    # filter_grad differentiates the first argument only
    *(
        Api(f"equinox.{name}", transform="wraps", traced_args=(0,), traced_by="argnums", differentiates=True)
        for name in ("filter_grad", "filter_value_and_grad")
    ),
    Api("equinox.filter_checkpoint", transform="wraps", traced_args=(0,)),
    Api("flax.nnx.vmap", transform="wraps", traced_args=(0,), traced_by="in_axes"),
    *(
        Api(f"flax.nnx.{name}", transform="wraps", traced_args=(0,), traced_by="argnums", differentiates=True)
        for name in ("grad", "value_and_grad")
    ),
    Api("flax.nnx.remat", transform="wraps", traced_args=(0,)),
    Api("flax.nnx.scan", transform="wraps", traced_args=(0,)),
    # Lifted transforms of linen Modules: the first argument is the Module itself.
    *(
        Api(f"flax.linen.{name}", transform="wraps", traced_args=(0,))
        for name in ("jit", "vmap", "remat", "checkpoint", "scan")
    ),
    # Classes whose instances run their own methods: `model.apply(variables, x)` runs
    # `Model.__call__(x)` (`method=Model.encode` or `method="encode"`: that method) ---------
    *(
        Api(name, applies="apply", apply_options=("method", "rngs", "mutable", "capture_intermediates"), public=public)
        for name, public in (("flax.linen.Module", None), ("flax.linen.module.Module", "flax.linen.Module"))
    ),
    # Creation: a new array from no array arguments - on the default device (or, in explicit
    # mode, the mesh), and a tracer inside a trace. `data`: from host data (`jnp.array([1, 2])`),
    # which may also be an array -------------------------------------------------------
    *(
        Api(f"jax.numpy.{name}", creates="shape")
        for name in (
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
        )
    ),
    Api("jax.numpy.array", creates="data"),
    Api("jax.numpy.asarray", creates="data"),
    Api("jax.lax.iota", creates="shape"),
    Api("jax.random.key", creates="shape"),
    Api("jax.random.PRNGKey", creates="shape"),
    # Functions of the array modules that answer from shapes and dtypes: never an array, a
    # static value even inside a trace --------------------------------------------------
    *(
        Api(f"jax.numpy.{name}", static=True)
        for name in (
            "dtype",
            "finfo",
            "iinfo",
            "shape",
            "ndim",
            "size",
            "issubdtype",
            "result_type",
            "promote_types",
            "can_cast",
            "isdtype",
            "broadcast_shapes",
        )
    ),
    Api("jax.lax.broadcast_shapes", static=True),
    Api("jax.lax.dtype", static=True),
    Api("jax.dtypes.canonicalize_dtype", static=True),
    # Array classes, in annotations: whose arrays ("array-like": any library's, or a scalar) ---
    Api("jax.Array", array_type="jax"),
    Api("jax.numpy.ndarray", array_type="jax", public="jax.Array"),
    Api("jax.ArrayImpl", array_type="jax", public="jax.Array"),
    Api("jax.core.Array", array_type="jax", public="jax.Array"),
    Api("jaxtyping.Array", array_type="jax", public="jax.Array"),
    Api("jax.typing.ArrayLike", array_type="array-like"),
    Api("chex.Array", array_type="array-like"),
    Api("torch.Tensor", array_type="torch"),
    Api("torch.nn.Parameter", array_type="torch"),
    Api("numpy.ndarray", array_type="numpy", tracer_class=False),
    Api("numpy.typing.NDArray", array_type="numpy"),
    Api("cupy.ndarray", array_type="cupy"),
    # The class of every tracer (`isinstance(x, core.Tracer)` tells a trace from a concrete run),
    # and host classes no tracer is an instance of (`jax.Array` is no such class: a tracer is one).
    Api("jax.core.Tracer", tracer_class=True),
    Api("jax._src.core.Tracer", tracer_class=True, public="jax.core.Tracer"),
    *(Api(f"numpy.{name}", tracer_class=False) for name in ("generic", "number", "integer", "floating", "bool_")),
    # Calls that need a concrete buffer (checked with the installed libraries by
    # tests/test_traced_concrete_access.py::test_consumer_table_matches_the_libraries) ---
    # torch 2.x reads an object with __dlpack__ through DLPack (torch/utils/dlpack.py), asking
    # __dlpack_device__ first: on a TPU these raise as torch.from_dlpack does.
    Api("torch.as_tensor", tracer_error=UNAVAILABLE, reads="dlpack-device", dlpack_conversion=True),
    Api("torch.asarray", tracer_error=UNAVAILABLE, reads="buffer"),  # measured: the buffer protocol
    Api("torch.tensor", tracer_error=UNAVAILABLE, reads="dlpack-device", dlpack_conversion=True),
    Api("torch.frombuffer", tracer_error="ValueError", reads="buffer"),
    Api("numpy.asarray", tracer_error=ARRAY_CONVERSION),
    Api("numpy.array", tracer_error=ARRAY_CONVERSION),
    Api("numpy.asanyarray", tracer_error=ARRAY_CONVERSION),
    Api("numpy.ascontiguousarray", tracer_error=ARRAY_CONVERSION),
    Api("numpy.frombuffer", tracer_error="TypeError", reads="buffer"),
    Api("cupy.asarray", tracer_error=UNAVAILABLE),
    Api("cupy.array", tracer_error=UNAVAILABLE),
    Api("memoryview", tracer_error="TypeError", reads="buffer"),
    Api("bytes", tracer_error="TypeError", reads="buffer"),
    Api("bytearray", tracer_error="TypeError", reads="buffer"),
    Api("pickle.dumps", tracer_error=CONCRETIZATION),
    Api("pickle.dump", tracer_error=CONCRETIZATION),
)

_FACTS = (frozenset(f.name for f in fields(Api)) - {"name"}) | {"library"}


def records(**facts) -> tuple[Api, ...]:
    """The records whose facts equal ``facts`` (``True`` for a string fact: it is set)."""
    unknown = set(facts) - _FACTS
    if unknown:
        raise TypeError(f"no such fact: {', '.join(sorted(unknown))}")
    return tuple(
        api
        for api in API
        if all(
            (getattr(api, fact) is not None and getattr(api, fact) is not False)
            if wanted is True and not isinstance(getattr(api, fact), bool)
            else getattr(api, fact) == wanted
            for fact, wanted in facts.items()
        )
    )


def names(**facts) -> frozenset[str]:
    """The qualified names, every spelling, of the records with ``facts``."""
    return frozenset(api.name for api in records(**facts))


def public_names(**facts) -> frozenset[str]:
    """Only the public spellings: for a resolver that already canonicalises."""
    return frozenset(api.name for api in records(**facts) if api.public is None)


def members(**facts) -> frozenset[str]:
    """The last components of the names with ``facts`` (`zeros`), for a check that asks a
    function of an array module by its member name."""
    return frozenset(name.rsplit(".", 1)[-1] for name in names(**facts))


def table(fact: str, **facts) -> dict[str, object]:
    """Name -> the value of ``fact``, for the records that have it (and ``facts``)."""
    return {api.name: getattr(api, fact) for api in records(**{fact: True, **facts})}


# Views more than one module asks for.
# Pytree maps, public spellings (``names.canonical`` maps the others to them).
TREE_MAPS = public_names(tree="map")
# The methods by which a library base class runs its instance's own methods (`apply`).
APPLIERS = frozenset(record.applies for record in records(applies=True))
# What returns the tracers it is given, inside a trace (`jax.device_get(x)`).
KEEPS_TRACERS = public_names(keeps_tracers=True)
