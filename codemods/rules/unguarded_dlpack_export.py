"""JAX006: DLPack or raw-pointer export of a JAX array whose sharding the code cannot know."""

from __future__ import annotations

from jax_codemod.analysis import values as v
from jax_codemod.rule import FixSafety
from jax_codemod.rules._dlpack_exports import Export, GatherBeforeExport


class UnguardedDlpackExport(GatherBeforeExport):
    """## What it does
    Finds DLPack and raw-pointer exports (the consumers JAX002 knows) of values that are
    JAX arrays of unknown sharding: parameters annotated `jax.Array` or `jnp.ndarray`, the
    argument of a function registered for `jax.Array` (`@f.register(jax.Array)`), results
    of `jnp`/`jax.lax`/`jax.nn`/`jax.random` calls and jitted functions applied to values
    the file cannot place, and names narrowed by `isinstance(x, jax.Array)`. Torch tensors, NumPy arrays, values
    of unknown origin and arrays the file creates on one device are never reported.
    Opt-in: it rewrites every such library boundary.

    The helper is shared with JAX002: defined once per module after the imports, or
    imported from `helper-module` when `[tool.codemod]` names one. Exports already guarded
    (a gather, a check of the sharding or platform, `try`/`except BufferError`) are left
    alone, as are exports in a helper whose every call, project-wide, sits in such a `try`.

    ## Why is this bad?
    Whether the export works depends on the caller: an array sharded over several devices
    makes `torch.from_dlpack(x)`, `np.from_dlpack(x)` or `x.__dlpack__()` raise
    `BufferError` ("__dlpack__ only supported for unsharded arrays."), far from the code
    that sharded it.

    ## Example
    ```python
    import jax
    import torch


    def jax_to_torch(value: jax.Array) -> torch.Tensor:
        return torch.from_dlpack(value)
    ```

    ## Use instead
    ```python
    import jax
    import torch


    def ensure_single_device(x):
        devices = getattr(getattr(x, "sharding", None), "device_set", None)
        if devices is None or len(devices) <= 1 or not getattr(x, "is_fully_addressable", True):
            return x
        import jax

        return jax.device_put(x, min(devices, key=lambda device: device.id))


    def jax_to_torch(value: jax.Array) -> torch.Tensor:
        return torch.from_dlpack(ensure_single_device(value))
    ```

    ## Fix safety
    Unsafe. Single-device arrays pass through the helper unchanged, but a multi-device
    array that used to fail with `BufferError` is now silently gathered: a full copy onto
    one device, which may not fit there, and which the consumer no longer aliases. A
    maintainer should decide that a boundary should gather rather than fail. Raw-pointer
    exports rebind the variable first (`x = ensure_single_device(x)`), so the copy lives
    as long as the variable; a returned pointer, or one taken from an expression, would
    outlive its copy and is reported without a fix, as are exports with `copy=False`.
    """

    CODE = "JAX006"
    NAME = "unguarded-dlpack-export"
    DEFAULT_ENABLED = False
    FIX_SAFETY = FixSafety.UNSAFE
    PLACEMENTS = frozenset({v.PLACEMENT_UNKNOWN})
    WRAP_SAFETY = FixSafety.UNSAFE
    PROJECT_PREFILTER = False

    def describe(self, source: str, value: v.Value, export: Export) -> str:
        return (
            f"`{source}` is a JAX array of unknown sharding (from {value.why}); {export.via} raises "
            f"{export.error} if it spans several devices"
        )
