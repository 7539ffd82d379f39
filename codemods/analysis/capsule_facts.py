"""The capsule analysis's vocabulary: the kinds of capsule producer, the consumers by name, the
words and members that say capsule or array, and the records the analysis answers with
(``Producer``, ``Use``, ``Flow``, ``Origin``). Shared by ``capsules`` and the modules it is split
into (``capsule_reaching``, ``capsule_index``, ``capsule_origins``, ``array_evidence``,
``backend_pairs``), which import it rather than one another."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from jax_codemod.analysis import api
from jax_codemod.analysis.values import ARRAY_KINDS, CAPSULE_PRODUCERS, OTHER_ARRAYS

# Producers ------------------------------------------------------------------------

JAX_TO_DLPACK, TORCH_TO_DLPACK, TF_TO_DLPACK = (
    frozenset(name for name, library in CAPSULE_PRODUCERS.items() if library == owner)
    for owner in ("jax", "torch", "tensorflow")
)
JAX = "jax"  # jax.dlpack.to_dlpack(x): removed in JAX 0.7
# jax._src.dlpack.to_dlpack(x): the function behind `x.__dlpack__()`, still there (same
# signature since 0.4.3x); its capsule is only wrong where JAX itself is asked to take it.
JAX_PRIVATE = "jax-private"
TORCH = "torch"  # torch.utils.dlpack.to_dlpack(t)
DUNDER = "dunder"  # v.__dlpack__(...): any array-protocol object
CUPY = "cupy"  # cupy_array.toDlpack()
TENSORFLOW = "tensorflow"  # tf.experimental.dlpack.to_dlpack(t): TF tensors may lack __dlpack__
# wp.to_dlpack(a): a producer whose exported array has the protocol itself (api.py's
# `protocol_array`: name -> "argument" or "receiver"), so a consumer can take that array instead.
PROTOCOL = "protocol"
PROTOCOL_PRODUCERS: dict[str, str] = api.table("protocol_array")
# The same, for a method known by its name on a receiver the file does not resolve (`toDlpack`).
PROTOCOL_METHODS = {name.rsplit(".", 1)[1]: name for name, where in PROTOCOL_PRODUCERS.items() if where == "receiver"}

# Consumers ------------------------------------------------------------------------

# JAX's consumers: they take an array-protocol object and reject capsules (TypeError).
JAX_CONSUMERS = api.names(library="jax", takes_arrays=True)
# Capsules made by another library than JAX (whose own `to_dlpack` this rule fixes in its file).
_OTHER_LIBRARY_CAPSULES = frozenset({TORCH, TENSORFLOW, DUNDER, CUPY, PROTOCOL})
# Consumers that take an array-protocol object; the torch ones take a capsule as well.
ARRAY_CONSUMERS = api.names(takes_arrays=True)
CAPSULE_TOLERANT = api.names(takes_capsules=True)

# What a PyCapsule does not have: methods that return a tensor/array, attributes of one.
_TENSOR_METHODS = frozenset({
    "contiguous", "cuda", "cpu", "detach", "to", "clone", "float", "double", "half", "bfloat16", "int",
    "long", "numpy", "copy", "astype", "reshape", "view", "flatten", "squeeze", "unsqueeze", "transpose",
    "permute", "asnumpy", "block_until_ready",
})
_TENSOR_ATTRIBUTES = frozenset({"T", "mT", "H", "data", "real", "imag"})
# Attributes that say "an array" (not just "not a capsule": a dict or a dataclass has attributes too).
_ARRAY_ONLY_ATTRIBUTES = frozenset({
    "shape", "ndim", "dtype", "device", "devices", "sharding", "is_cuda", "is_contiguous", "contiguous",
    "numel", "stride", "strides", "nbytes", "itemsize", "T", "mT", "detach", "requires_grad", "cuda", "cpu",
})
_PROTOCOL_ATTRIBUTES = frozenset({"__dlpack__", "__dlpack_device__", "__array__", "__array_interface__",
                                  "__cuda_array_interface__"})
_ARRAY_CLASSES = api.names(array_type=True)

# What the value analysis knows to be an array or tensor of some library (not a capsule).
_KNOWN_ARRAYS = ARRAY_KINDS | OTHER_ARRAYS
# Words in a name, attribute, key or annotation that say "this holds a capsule".
_CAPSULE_WORDS = re.compile(r"capsule|dlpack|dl_?tensor|dlpk|(^|_)dlp($|_)", re.IGNORECASE)
# ...and in a name, that it holds an array (`x_np`, `torch_tensor`, `arr`): a capsule's name says capsule.
_ARRAY_WORDS = re.compile(r"tensor|array|(^|_)(np|numpy|torch|pt|th|tf|cp|cupy|jnp|jax|arr|nd)($|_)", re.IGNORECASE)
# Modules whose functions return arrays or tensors, never capsules (but their to_dlpack).
_ARRAY_LIBRARIES = frozenset({"numpy", "torch", "jax", "cupy", "tensorflow"})
# Functions whose result is an object with `__dlpack__` (not a capsule), though their names
# say "dlpack": pydlpack's `asdlpack` wraps anything with an array protocol for any consumer.
_PROTOCOL_OBJECT_MAKERS = frozenset({"dlpack.asdlpack"})


@dataclass(frozen=True)
class Producer:
    call: ast.Call
    kind: str
    source: ast.expr | None  # the array the capsule exports (None: not a plain call)
    qualname: str | None


@dataclass(frozen=True)
class Use:
    """One place a capsule value reaches: a consumer's first argument, or an escape."""

    node: ast.AST  # the expression that evaluates to the capsule there
    consumer: ast.Call | None
    consumer_name: str | None
    escape: str | None = None  # why it is not a consumer: "returned", "passed to f", ...


@dataclass
class Flow:
    producer: Producer
    # "direct": the producer is a consumer's argument; "variable": bound to a name;
    # "container": an element of a list/tuple/dict/comprehension bound to a name;
    # "escape": anywhere else.
    via: str
    uses: list[Use] = field(default_factory=list)
    holder: ast.stmt | None = None  # the assignment of the variable or container
    variable: str | None = None

    @property
    def escapes(self) -> list[Use]:
        return [use for use in self.uses if use.consumer is None]

    @property
    def consumers(self) -> list[Use]:
        return [use for use in self.uses if use.consumer is not None]


@dataclass(frozen=True)
class Origin:
    """Where a value fed to a consumer comes from."""

    kind: str  # "capsule" (a flow from a producer) | "stored" | "parameter" | "unknown" | "array"
    flow: Flow | None = None
    parameter: ast.arg | None = None
    function: ast.AST | None = None
    evidence: str | None = None  # why we think it is a capsule, in words
