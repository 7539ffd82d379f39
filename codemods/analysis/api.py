"""The facts about library functions that the analysis and the rules judge calls by.

Each qualified name stands here once, as one record of what it does; a rule or analysis asks
for the names with the facts it cares about (``names(takes_arrays=True)``) instead of keeping
its own list, so two rules cannot judge the same call differently. A rule keeps only the tables
that are truly its own (JAX001's members of ``jax.core.Tracer``).

Names are the public spellings that ``values.public_name`` gives, unless ``public`` says which
public name a private or legacy spelling stands for: a resolver that does not canonicalise
(``FileContext.qualname``) needs those spellings too.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

# What a call raises when it is given a tracer (JAX001 reports it).
CONCRETIZATION = "ConcretizationTypeError"
ARRAY_CONVERSION = "TracerArrayConversionError"
UNAVAILABLE = "AttributeError"  # JAX hides the attribute so that hasattr() stays False


@dataclass(frozen=True)
class Api:
    """One library function and its facts.

    ``takes_arrays``: a DLPack consumer that takes an object with ``__dlpack__`` and asks it for
    one buffer. ``takes_capsules``: a consumer that takes a DLPack ``PyCapsule``.
    ``makes_capsules``: a producer of a capsule, of ``library``'s arrays. ``host_constructor``:
    the same library's constructor from a host (NumPy) copy, for a consumer. ``single_device``:
    its result is a JAX array on one device. ``tracer_error``: what it raises given a tracer,
    because it needs a concrete buffer. ``tree``: a pytree helper, what it gives ("map": runs
    its function on the leaves; "leaves"/"flatten": the leaves, as a list or with the treedef;
    "leaves_with_path"/"flatten_with_path": each leaf with its path). ``public``: the public
    name a private or legacy spelling stands for.
    """

    name: str
    library: str
    takes_arrays: bool = False
    takes_capsules: bool = False
    makes_capsules: bool = False
    host_constructor: str | None = None
    single_device: bool = False
    tracer_error: str | None = None
    tree: str | None = None
    creates: str | None = None
    static: bool = False
    array_type: str | None = None
    public: str | None = None


def _jax(name: str, **facts) -> Api:
    return Api(name, "jax", **facts)


def _torch(name: str, **facts) -> Api:
    return Api(name, "torch", **facts)


def _numpy(name: str, **facts) -> Api:
    return Api(name, "numpy", **facts)


def _cupy(name: str, **facts) -> Api:
    return Api(name, "cupy", **facts)


def _tensorflow(name: str, **facts) -> Api:
    return Api(name, "tensorflow", **facts)


def _python(name: str, **facts) -> Api:
    return Api(name, "python", **facts)


# Modules whose functions take and return JAX arrays (`jax.image.resize`): inside a trace, their
# results are tracers when an argument is.
ARRAY_MODULES = ("jax.numpy.", "jax.lax.", "jax.nn.", "jax.scipy.", "jax.random.", "jax.image.")

API: tuple[Api, ...] = (
    # DLPack ---------------------------------------------------------------------------
    # JAX's consumers take an array-protocol object and reject capsules (TypeError since 0.7.2:
    # that version question is removed_dlpack_api's); the result is on one device.
    _jax("jax.dlpack.from_dlpack", takes_arrays=True, single_device=True),
    _jax("jax.numpy.from_dlpack", takes_arrays=True, single_device=True),
    _jax("jax._src.dlpack.from_dlpack", takes_arrays=True, single_device=True, public="jax.dlpack.from_dlpack"),
    _jax("jax.dlpack.to_dlpack", makes_capsules=True),
    _jax("jax._src.dlpack.to_dlpack", makes_capsules=True, public="jax.dlpack.to_dlpack"),
    # torch reads __dlpack_device__ first (torch/utils/dlpack.py, torch/_tensor.py), and
    # takes a capsule as well.
    _torch(
        "torch.from_dlpack",
        takes_arrays=True,
        takes_capsules=True,
        host_constructor="torch.as_tensor",
        tracer_error=UNAVAILABLE,
    ),
    _torch(
        "torch.utils.dlpack.from_dlpack",
        takes_arrays=True,
        takes_capsules=True,
        host_constructor="torch.as_tensor",
        tracer_error=UNAVAILABLE,
    ),
    _torch("torch.utils.dlpack.to_dlpack", makes_capsules=True),
    _torch("torch.to_dlpack", makes_capsules=True, public="torch.utils.dlpack.to_dlpack"),
    _numpy("numpy.from_dlpack", takes_arrays=True, host_constructor="numpy.asarray", tracer_error=CONCRETIZATION),
    # CuPy takes __cuda_array_interface__ or __dlpack__ (a tracer has neither); its
    # `from_dlpack` still takes a legacy capsule, `fromDlpack` nothing else.
    _cupy(
        "cupy.from_dlpack",
        takes_arrays=True,
        takes_capsules=True,
        host_constructor="cupy.asarray",
        tracer_error=CONCRETIZATION,
    ),
    _cupy("cupy.fromDlpack", takes_capsules=True),
    # TensorFlow's consumer takes a capsule only (`from_dlpack(dlcapsule)`: "A PyCapsule named
    # as dltensor"), and many releases' tensors have no `__dlpack__` (tensorflow#61769).
    _tensorflow("tensorflow.experimental.dlpack.from_dlpack", takes_capsules=True),
    _tensorflow("tensorflow.experimental.dlpack.to_dlpack", makes_capsules=True),
    # Pytrees: "map" runs its function on the leaves; the others give the leaves -------
    _jax("jax.tree_util.tree_map", tree="map"),
    _jax("jax.tree.map", tree="map", public="jax.tree_util.tree_map"),
    _jax("jax.tree_map", tree="map", public="jax.tree_util.tree_map"),  # removed in JAX 0.6
    _jax("jax.tree_util.tree_leaves", tree="leaves"),
    _jax("jax.tree.leaves", tree="leaves", public="jax.tree_util.tree_leaves"),
    _jax("jax.tree_leaves", tree="leaves", public="jax.tree_util.tree_leaves"),
    _jax("jax.tree_util.tree_flatten", tree="flatten"),
    _jax("jax.tree.flatten", tree="flatten", public="jax.tree_util.tree_flatten"),
    _jax("jax.tree_flatten", tree="flatten", public="jax.tree_util.tree_flatten"),
    _jax("jax.tree_util.tree_leaves_with_path", tree="leaves_with_path"),
    _jax("jax.tree.leaves_with_path", tree="leaves_with_path", public="jax.tree_util.tree_leaves_with_path"),
    _jax("jax.tree_util.tree_flatten_with_path", tree="flatten_with_path"),
    _jax("jax.tree.flatten_with_path", tree="flatten_with_path", public="jax.tree_util.tree_flatten_with_path"),
    # Creation: a new array from no array arguments - on the default device (or, in explicit
    # mode, the mesh), and a tracer inside a trace. `data`: from host data (`jnp.array([1, 2])`),
    # which may also be an array -------------------------------------------------------
    *(
        _jax(f"jax.numpy.{name}", creates="shape")
        for name in ("arange", "zeros", "ones", "empty", "full", "eye", "identity", "linspace",
                     "logspace", "geomspace", "tri")
    ),
    _jax("jax.numpy.array", creates="data"),
    _jax("jax.numpy.asarray", creates="data"),
    _jax("jax.lax.iota", creates="shape"),
    _jax("jax.random.key", creates="shape"),
    _jax("jax.random.PRNGKey", creates="shape"),
    # Functions of the array modules that answer from shapes and dtypes: never an array, a
    # static value even inside a trace --------------------------------------------------
    *(
        _jax(f"jax.numpy.{name}", static=True)
        for name in ("dtype", "finfo", "iinfo", "shape", "ndim", "size", "issubdtype", "result_type",
                     "promote_types", "can_cast", "isdtype", "broadcast_shapes")
    ),
    _jax("jax.lax.broadcast_shapes", static=True),
    _jax("jax.lax.dtype", static=True),
    _jax("jax.dtypes.canonicalize_dtype", static=True),
    # Array classes, in annotations: whose arrays ("array-like": any library's, or a scalar) ---
    _jax("jax.Array", array_type="jax"),
    _jax("jax.numpy.ndarray", array_type="jax", public="jax.Array"),
    _jax("jax.ArrayImpl", array_type="jax", public="jax.Array"),
    _jax("jax.core.Array", array_type="jax", public="jax.Array"),
    Api("jaxtyping.Array", "jaxtyping", array_type="jax", public="jax.Array"),
    _jax("jax.typing.ArrayLike", array_type="array-like"),
    Api("chex.Array", "chex", array_type="array-like"),
    _torch("torch.Tensor", array_type="torch"),
    _torch("torch.nn.Parameter", array_type="torch"),
    _numpy("numpy.ndarray", array_type="numpy"),
    _numpy("numpy.typing.NDArray", array_type="numpy"),
    _cupy("cupy.ndarray", array_type="cupy"),
    # Calls that need a concrete buffer (checked with the installed libraries by
    # tests/test_traced_concrete_access.py::test_consumer_table_matches_the_libraries) ---
    _torch("torch.as_tensor", tracer_error=UNAVAILABLE),
    _torch("torch.asarray", tracer_error=UNAVAILABLE),
    _torch("torch.tensor", tracer_error=UNAVAILABLE),
    _torch("torch.frombuffer", tracer_error="ValueError"),
    _numpy("numpy.asarray", tracer_error=ARRAY_CONVERSION),
    _numpy("numpy.array", tracer_error=ARRAY_CONVERSION),
    _numpy("numpy.asanyarray", tracer_error=ARRAY_CONVERSION),
    _numpy("numpy.ascontiguousarray", tracer_error=ARRAY_CONVERSION),
    _numpy("numpy.frombuffer", tracer_error="TypeError"),
    _cupy("cupy.asarray", tracer_error=UNAVAILABLE),
    _cupy("cupy.array", tracer_error=UNAVAILABLE),
    _python("memoryview", tracer_error="TypeError"),
    _python("bytes", tracer_error="TypeError"),
    _python("bytearray", tracer_error="TypeError"),
    _python("pickle.dumps", tracer_error=CONCRETIZATION),
    _python("pickle.dump", tracer_error=CONCRETIZATION),
)

_FACTS = frozenset(f.name for f in fields(Api)) - {"name"}


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
