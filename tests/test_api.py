"""The one table of API facts: each name once, and every view derived from it equal to the table
the view replaced, apart from the disagreements decided on purpose (each named here, each with a
snapshot case)."""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path

import pytest
from jax_codemod.analysis import api, capsules, transforms, values
from jax_codemod.rules import _dlpack_exports, dlpack_without_host_fallback
from jax_codemod.rules import traced_concrete_access as jax001

ROOT = Path(__file__).resolve().parent.parent

TORCH_CONSUMERS = {"torch.from_dlpack", "torch.utils.dlpack.from_dlpack"}
JAX_CONSUMERS = {"jax.dlpack.from_dlpack", "jax.numpy.from_dlpack", "jax._src.dlpack.from_dlpack"}
TF_CONSUMER = "tensorflow.experimental.dlpack.from_dlpack"

OLD_ARRAY_MODULES = ("jax.numpy.", "jax.lax.", "jax.nn.", "jax.scipy.", "jax.random.", "jax.image.")
OLD_CREATION = {
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
    "key",
    "PRNGKey",
}

# The tables as they stood before api.py (main at 8557920), and what changed on purpose.
OLD = {
    "capsules.JAX_CONSUMERS": (capsules.JAX_CONSUMERS, JAX_CONSUMERS),
    "capsules.ARRAY_CONSUMERS": (
        capsules.ARRAY_CONSUMERS,
        JAX_CONSUMERS | TORCH_CONSUMERS | {"numpy.from_dlpack", "cupy.from_dlpack"},
    ),
    "capsules.CAPSULE_TOLERANT": (
        capsules.CAPSULE_TOLERANT,
        TORCH_CONSUMERS | {"cupy.from_dlpack", "cupy.fromDlpack", TF_CONSUMER},
    ),
    # Decision 1: TensorFlow's from_dlpack takes a capsule only, as capsules.py had it, so
    # JAX002/JAX006 no longer call `tf.experimental.dlpack.from_dlpack(x)` an export of `x`
    # (tests/snapshots/sharded_dlpack_export/noop_tensorflow_takes_capsules.py).
    "_dlpack_exports.CONSUMERS": (
        _dlpack_exports.CONSUMERS,
        TORCH_CONSUMERS
        | {"numpy.from_dlpack", "cupy.from_dlpack", "jax.numpy.from_dlpack", "jax.dlpack.from_dlpack"},
    ),
    "dlpack_without_host_fallback.READERS": (
        dlpack_without_host_fallback.READERS,
        {
            "torch.from_dlpack": "dlpack-device",
            "torch.utils.dlpack.from_dlpack": "dlpack-device",
            "numpy.from_dlpack": "dlpack",
            "cupy.from_dlpack": "dlpack",
            "memoryview": "buffer",
            "numpy.frombuffer": "buffer",
            "torch.frombuffer": "buffer",
            "torch.as_tensor": "dlpack-device",
            "torch.asarray": "buffer",
            "torch.tensor": "dlpack-device",
            "jax.dlpack.from_dlpack": "dlpack-device",
            "jax.numpy.from_dlpack": "dlpack-device",
            "jax._src.dlpack.from_dlpack": "dlpack-device",
            "jax.dlpack.to_dlpack": "dlpack",
            "jax._src.dlpack.to_dlpack": "dlpack",
            "bytes": "buffer",
            "bytearray": "buffer",
        },
    ),
    "values.CAPSULE_PRODUCERS": (
        values.CAPSULE_PRODUCERS,
        {
            "jax.dlpack.to_dlpack": "jax",
            "jax._src.dlpack.to_dlpack": "jax",
            "torch.utils.dlpack.to_dlpack": "torch",
            "torch.to_dlpack": "torch",
            "tensorflow.experimental.dlpack.to_dlpack": "tensorflow",
            # Added with issue 54's protocol producers (their exported arrays have `__dlpack__`).
            "warp.to_dlpack": "warp",
            "warp.dlpack.to_dlpack": "warp",
            "cupy.ndarray.toDlpack": "cupy",
        },
    ),
    "values.SINGLE_PRODUCERS": (values.SINGLE_PRODUCERS, {"jax.dlpack.from_dlpack", "jax.numpy.from_dlpack"}),
    "traced_concrete_access.CONSUMERS": (
        {name: consumer.error for name, consumer in jax001.CONSUMERS.items()},
        {
            "torch.from_dlpack": "AttributeError",
            "torch.utils.dlpack.from_dlpack": "AttributeError",
            "torch.as_tensor": "AttributeError",
            "torch.asarray": "AttributeError",
            "torch.tensor": "AttributeError",
            "torch.frombuffer": "ValueError",
            "numpy.asarray": "TracerArrayConversionError",
            "numpy.array": "TracerArrayConversionError",
            "numpy.asanyarray": "TracerArrayConversionError",
            "numpy.ascontiguousarray": "TracerArrayConversionError",
            "numpy.from_dlpack": "ConcretizationTypeError",
            "numpy.frombuffer": "TypeError",
            "cupy.from_dlpack": "ConcretizationTypeError",
            "cupy.asarray": "AttributeError",
            "cupy.array": "AttributeError",
            "memoryview": "TypeError",
            "bytes": "TypeError",
            "bytearray": "TypeError",
            "pickle.dumps": "ConcretizationTypeError",
            "pickle.dump": "ConcretizationTypeError",
        },
    ),
    "values.TREE_LEAVES": (values.TREE_LEAVES, {"jax.tree_util.tree_leaves"}),
    "values.TREE_FLATTEN": (values.TREE_FLATTEN, {"jax.tree_util.tree_flatten"}),
    # Decision (issue 29): one table of pytree maps, api.TREE_MAPS, for values, _dlpack_exports
    # and JAX001, in the public spelling only: the one resolver (names.canonical) maps
    # `jax.tree.map` and `jax.tree_map` to it for every rule, JAX001's included.
    "api.TREE_MAPS": (api.TREE_MAPS, {"jax.tree_util.tree_map"}),
    "traced_concrete_access.TREE_MAPS": (jax001.TREE_MAPS, {"jax.tree_util.tree_map"}),
    # The transform tables of values and transforms, one set of api records (issue 29).
    # Decision: `jax.remat` is `jax.checkpoint` (JAX documents it as its alias) to JAX001 too,
    # which had its own entry (tests/snapshots/traced_concrete_access/report_remat_alias.py).
    "transforms.JIT_LIKE": (
        transforms.JIT_LIKE,
        {"jax.jit", "jax.experimental.pjit.pjit", "equinox.filter_jit", "flax.nnx.jit"},
    ),
    "transforms.OTHER_TRANSFORMS": (
        transforms.OTHER_TRANSFORMS,
        {
            "jax.vmap": ((0,), "in_axes"),
            "jax.pmap": ((0,), None),
            "jax.grad": ((0,), "argnums"),
            "jax.value_and_grad": ((0,), "argnums"),
            "jax.jacfwd": ((0,), "argnums"),
            "jax.jacrev": ((0,), "argnums"),
            "jax.hessian": ((0,), "argnums"),
            "jax.checkpoint": ((0,), None),
            "jax.shard_map": ((0,), None),
            "jax.jvp": ((0,), None),
            "jax.vjp": ((0,), None),
            "jax.linearize": ((0,), None),
            "jax.lax.scan": ((0,), None),
            "jax.lax.map": ((0,), None),
            "jax.lax.associative_scan": ((0,), None),
            "jax.lax.while_loop": ((0, 1), None),
            "jax.lax.fori_loop": ((2,), None),
            "jax.lax.cond": ((1, 2), None),
            "jax.lax.switch": ((1,), None),
            "equinox.filter_vmap": ((0,), "in_axes"),
            "equinox.filter_pmap": ((0,), None),
            "equinox.filter_grad": ((0,), "argnums"),
            "equinox.filter_value_and_grad": ((0,), "argnums"),
            "equinox.filter_checkpoint": ((0,), None),
            "flax.nnx.vmap": ((0,), "in_axes"),
            "flax.nnx.grad": ((0,), "argnums"),
            "flax.nnx.value_and_grad": ((0,), "argnums"),
            "flax.nnx.remat": ((0,), None),
            "flax.nnx.scan": ((0,), None),
            "flax.linen.jit": ((0,), None),
            "flax.linen.vmap": ((0,), None),
            "flax.linen.remat": ((0,), None),
            "flax.linen.checkpoint": ((0,), None),
            "flax.linen.scan": ((0,), None),
        },
    ),
    "values.WRAPPING_TRANSFORMS": (
        values.WRAPPING_TRANSFORMS,
        {
            "jax.jit",
            "jax.experimental.pjit.pjit",
            "jax.pmap",
            "jax.vmap",
            "jax.grad",
            "jax.value_and_grad",
            "jax.jacfwd",
            "jax.jacrev",
            "jax.hessian",
            "jax.checkpoint",
            "jax.shard_map",
        },
    ),
    "values.TRACING_TRANSFORMS": (
        values.TRACING_TRANSFORMS,
        values.WRAPPING_TRANSFORMS
        | {
            "jax.jvp",
            "jax.vjp",
            "jax.linearize",
            "jax.lax.scan",
            "jax.lax.map",
            "jax.lax.associative_scan",
            "jax.lax.while_loop",
            "jax.lax.fori_loop",
            "jax.lax.cond",
            "jax.lax.switch",
        },
    ),
    "values.JIT_TRANSFORMS": (values.JIT_TRANSFORMS, {"jax.jit", "jax.experimental.pjit.pjit"}),
    "values.MULTI_TRANSFORMS": (values.MULTI_TRANSFORMS, {"jax.pmap", "jax.shard_map"}),
    "traced_concrete_access.DIFFERENTIATION": (
        jax001.DIFFERENTIATION,
        {
            "jax.grad",
            "jax.value_and_grad",
            "jax.jacfwd",
            "jax.jacrev",
            "jax.hessian",
            "jax.jvp",
            "jax.vjp",
            "jax.linearize",
            "equinox.filter_grad",
            "equinox.filter_value_and_grad",
            "flax.nnx.grad",
            "flax.nnx.value_and_grad",
        },
    ),
    # Decision 2: JAX001 knows the legacy `jax.tree_leaves` / `jax.tree_flatten` (JAX 0.4.30 to
    # 0.5) as it knew `jax.tree_map` (tests/snapshots/traced_concrete_access/
    # rewrite_legacy_tree_spellings.py).
    "traced_concrete_access.TREE_LEAVES": (
        jax001.TREE_LEAVES,
        {
            "jax.tree.leaves",
            "jax.tree.flatten",
            "jax.tree_util.tree_leaves",
            "jax.tree_util.tree_flatten",
            "jax.tree_util.tree_leaves_with_path",
            "jax.tree_util.tree_flatten_with_path",
            "jax.tree.leaves_with_path",
            "jax.tree.flatten_with_path",
        }
        | {"jax.tree_leaves", "jax.tree_flatten"},
    ),
    # Decision 3: JAX001's array modules include jax.image, as values' did.
    "values.ARRAY_MODULES": (values.ARRAY_MODULES, OLD_ARRAY_MODULES),
    "traced_concrete_access.ARRAY_MODULES": (jax001.ARRAY_MODULES, OLD_ARRAY_MODULES),
    # Decision 4: one list of creation functions. JAX001 also knows logspace, geomspace, tri and
    # the random keys make tracers from no traced argument
    # (tests/snapshots/traced_concrete_access/report_creation_in_trace.py); values also places
    # lax.iota's result as creation's (not array and asarray: their data may be an array).
    "values.CREATION": (values.CREATION, OLD_CREATION | {"iota"}),
    "traced_concrete_access.CREATION_FUNCTIONS": (
        jax001.CREATION_FUNCTIONS,
        {
            "zeros",
            "ones",
            "full",
            "empty",
            "arange",
            "linspace",
            "eye",
            "identity",
            "array",
            "asarray",
            "iota",
        }
        | {"logspace", "geomspace", "tri", "key", "PRNGKey"},
    ),
    "traced_concrete_access.SHAPE_FUNCTIONS": (
        jax001.SHAPE_FUNCTIONS,
        {
            "shape",
            "ndim",
            "size",
            "broadcast_shapes",
            "result_type",
            "dtype",
            "iinfo",
            "finfo",
            "issubdtype",
            "promote_types",
            "can_cast",
            "isdtype",
            "canonicalize_dtype",
        },
    ),
    # Decision 5: values knows the shape and dtype functions JAX001 knew: broadcast_shapes (of
    # jax.numpy and jax.lax) and lax.dtype return no array (jax.dtypes is no array module).
    "values.NOT_ARRAYS": (
        values.NOT_ARRAYS,
        {
            f"jax.numpy.{name}"
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
                "vectorize",
            )
        }
        | {f"jax.lax.{name}" for name in ("fori_loop", "while_loop", "scan", "cond", "switch", "map")}
        | {
            "jax.numpy.broadcast_shapes",
            "jax.lax.broadcast_shapes",
            "jax.lax.dtype",
            "jax.dtypes.canonicalize_dtype",
        },
    ),
    "values.JAX_ARRAY_TYPES": (values.JAX_ARRAY_TYPES, {"jax.Array"}),
    "values.TORCH_TYPES": (values.TORCH_TYPES, {"torch.Tensor", "torch.nn.Parameter"}),
    "values.NUMPY_TYPES": (values.NUMPY_TYPES, {"numpy.ndarray", "numpy.typing.NDArray"}),
    # Every spelling of the array classes; `jax.ArrayImpl` and `jax.core.Array` are new here, but
    # CapsuleAnalysis.qualname gives `jax.Array` for them already (values' renames).
    "capsules._ARRAY_CLASSES": (
        capsules._ARRAY_CLASSES,
        {
            "torch.Tensor",
            "torch.nn.Parameter",
            "numpy.ndarray",
            "numpy.typing.NDArray",
            "jax.Array",
            "jax.numpy.ndarray",
            "jax.typing.ArrayLike",
            "cupy.ndarray",
            "chex.Array",
            "jaxtyping.Array",
        }
        | {"jax.ArrayImpl", "jax.core.Array"},
    ),
}


@pytest.mark.parametrize("view", sorted(OLD))
def test_derived_view_equals_the_table_it_replaced(view):
    derived, old = OLD[view]
    if isinstance(old, dict):
        assert dict(derived) == old
    else:
        assert set(derived) == set(old)


def test_each_name_is_one_record():
    spelled = [record.name for record in api.API]
    assert len(spelled) == len(set(spelled))


def test_a_private_spelling_names_a_record_with_the_same_facts():
    by_name = {record.name: record for record in api.API}
    for record in api.API:
        if record.public is not None:
            public = by_name[record.public]
            assert public.public is None
            assert replace(record, name=public.name, public=None) == public


def test_every_read_is_one_the_platform_table_knows():
    from jax_codemod.analysis import platforms

    assert set(api.table("reads").values()) <= set(platforms.READS)


def test_unknown_facts_are_refused():
    with pytest.raises(TypeError, match="no such fact"):
        api.names(takes_tracers=True)


# The resolver's spelling maps (private or legacy name -> public name) say how a name is
# spelled, not what it does: they go to the one resolver, not here.
SPELLING_MAPS = {"_MODULES", "_NAMES"}


# Tables of another fact that name some of the same functions: values' array-module functions
# whose result is not an array (the lax loops return their carry, not an array placed like
# their arguments).
OTHER_FACTS = {"NOT_ARRAYS"}


def _dotted_tables(path: Path):
    """Module-level assignments and the string literals they hold (a constant naming one
    function is a reference to it, as a message is, not a table)."""
    for node in ast.parse(path.read_text()).body:
        target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
        if getattr(target, "id", None) in SPELLING_MAPS | OTHER_FACTS:
            continue
        if isinstance(getattr(node, "value", None), ast.Constant):
            continue
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            strings = {
                c.value
                for c in ast.walk(node.value)
                if isinstance(c, ast.Constant) and isinstance(c.value, str)
            }
            yield node, strings


@pytest.mark.parametrize(
    "name",
    sorted(
        api.names(takes_arrays=True)
        | api.names(takes_capsules=True)
        | api.names(makes_capsules=True)
        | api.names(tree=True)
        | api.names(array_type=True)
        | api.names(transform=True)
    ),
)
def test_no_other_module_lists_an_api_name(name):
    """DLPack consumers and producers and pytree helpers stand in api.py only (a docstring or a
    message may name them)."""
    for path in sorted((ROOT / "codemods").rglob("*.py")):
        if path.name == "api.py":
            continue
        for node, strings in _dotted_tables(path):
            assert name not in strings, f"{path.relative_to(ROOT)}:{node.lineno} lists {name}"
