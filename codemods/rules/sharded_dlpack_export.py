"""JAX002: DLPack or raw-pointer export of an array known to span several devices."""

from __future__ import annotations

from jax_codemod.analysis import values as v
from jax_codemod.rule import FixSafety
from jax_codemod.rules._dlpack_exports import Export, GatherBeforeExport


class ShardedDlpackExport(GatherBeforeExport):
    """## What it does
    Finds DLPack exports (`torch.from_dlpack(x)`, `torch.utils.dlpack.from_dlpack(x)`,
    `np.from_dlpack(x)`, `cupy.from_dlpack(x)`, `jnp.from_dlpack(x)`, `x.__dlpack__()`,
    `x.__dlpack_device__()`) and raw-pointer
    exports (`x.unsafe_buffer_pointer()`, `x.__cuda_array_interface__`) of a JAX array
    that the file itself places on several devices: the value is followed back through
    the assignments of its scope, and through jitted, pmapped and shard_mapped callables
    defined in the module, to `jax.device_put(x, NamedSharding(...))` (or a sharding
    variable), `jax.jit(..., out_shardings=...)`, `pjit`, `jax.pmap`, `shard_map`,
    `jax.make_array_from_callback` and its siblings, or `jax.lax.with_sharding_constraint`.

    The fix passes `ensure_single_device(x)` instead, a helper defined once per module
    after the imports; with `helper-module =
    "myproj.interop"` in `[tool.codemod]` it is imported from that module instead. It
    gathers onto the lowest-id device of the array's own sharding (no copy across
    backends) where that platform exports its memory (CPU, GPU), and onto JAX's CPU device
    where it does not (a TPU slice's cores, a plugin backend: measured on a TPU v5e, a
    gather onto a TPU core still cannot be exported), and returns anything that is not a
    multi-device JAX array unchanged. Code
    that already guards the export (a gather, a check of `x.sharding`,
    `is_fully_addressable`, `is_fully_replicated`, `addressable_data`, the platform, or a
    `try`/`except BufferError` around it) is left alone, as is an export in a helper whose
    every call, project-wide, sits in such a `try`.

    ## Why is this bad?
    A DLPack capsule and a buffer pointer describe one device's memory. Exporting an
    array whose sharding spans several devices raises `BufferError` ("to_dlpack can only
    pack a dlpack tensor from an array on a singular device", "__dlpack__ only supported
    for unsharded arrays."); `unsafe_buffer_pointer()` raises `JaxRuntimeError` and
    `__cuda_array_interface__` raises `AttributeError` for the same reason.

    ## Example
    ```python
    import jax
    import torch
    from jax.sharding import NamedSharding, PartitionSpec as P

    mesh = jax.make_mesh((4,), ("x",))
    x = jax.device_put(jax.numpy.arange(8.0), NamedSharding(mesh, P("x")))
    t = torch.from_dlpack(x)
    ```

    ## Use instead
    ```python
    import jax
    import torch
    from jax.sharding import NamedSharding, PartitionSpec as P


    def ensure_single_device(x):
        devices = getattr(getattr(x, "sharding", None), "device_set", None)
        if devices is None or len(devices) <= 1 or not getattr(x, "is_fully_addressable", True):
            return x
        import jax

        try:
            x.addressable_shards[0].data.__dlpack_device__()
        except BufferError:  # this platform's memory has no export: gather on the host
            return jax.device_put(x, jax.devices("cpu")[0])
        return jax.device_put(x, min(devices, key=lambda device: device.id))


    mesh = jax.make_mesh((4,), ("x",))
    x = jax.device_put(jax.numpy.arange(8.0), NamedSharding(mesh, P("x")))
    t = torch.from_dlpack(ensure_single_device(x))
    ```

    ## Fix safety
    Safe for DLPack exports: the export raised for every multi-device value, and the
    helper is the identity for single-device ones, so code that ran before runs the
    same. The gathered array is a copy held by the capsule: the consumer gets the same
    values but no longer aliases the sharded buffers, and the whole array must fit on one
    device. Each wrapped export gathers again. Raw-pointer exports are unsafe: a pointer
    does not keep its buffer alive, so the fix rebinds the variable before the statement
    (`x = ensure_single_device(x)`) and the copy lives as long as the variable, which also
    makes the rest of the scope see the gathered array. Pointers that are returned, taken
    from an expression, or taken from a name the function does not own, exports with
    `copy=False`, and files where `ensure_single_device` already names something else are
    reported without a fix. Arrays spanning several processes (not fully addressable)
    cannot be gathered onto one device this way. An export in another module is fixed at
    the call, `to_torch(ensure_single_device(batch))`, and that is unsafe: the whole callee
    then sees a single-device array (the same values; what it returns is no longer sharded).
    A method of another module that exports `self.<field>` of an instance built here with a
    sharded array in that field is reported at the method call without a fix: the array
    sits in the object, and gathering it where the object is built changes what the
    object holds for every other use.
    """

    CODE = "JAX002"
    NAME = "sharded-dlpack-export"
    DEFAULT_ENABLED = True
    FIX_SAFETY = FixSafety.SAFE
    PLACEMENTS = frozenset({v.MULTI, v.NOT_ADDRESSABLE})
    WRAP_SAFETY = FixSafety.SAFE
    # A multi-device array is JAX's: a file that names no jax gets one only from another module
    # of its project, which the project gate asks about (``project_prefilter``). Warp's
    # `__cuda_array_interface__` files are no longer parsed for it.
    REQUIRES = (b"jax",)

    def describe(self, source: str, value: v.Value, export: Export) -> str:
        return (
            f"`{source}` spans several devices (from {value.why}), so {export.via} raises "
            f"{export.error}: it exports one device's buffer"
        )
