"""Which platform refuses which way of reading a JAX array's memory, and what it raises.

One table, read by every rule that must be right on the target platforms (the setting
``target-platforms``: ``cpu``, ``gpu``, ``tpu``, or a plugin backend's name such as ``metal``).

A consumer reads a JAX array's memory one of three ways (``Api.reads``):

- ``dlpack-device``: it asks ``__dlpack_device__`` first (``torch.from_dlpack``,
  ``torch.utils.dlpack.from_dlpack``);
- ``dlpack``: it calls ``__dlpack__`` (``np.from_dlpack``, ``cupy.from_dlpack``, a direct
  ``x.__dlpack__()``);
- ``buffer``: the Python buffer protocol (``memoryview``, ``np.frombuffer``, ``torch.frombuffer``).

CPU and GPU arrays allow all three. A TPU's memory allows none (measured on a TPU v5e with JAX
0.10.2: the probes of ``tests/platform_probe.py``, whose outcomes the TPU record under
``.ci/results/tpu/`` keeps; ``tests/test_platform_sim.py`` holds this table to the newest record).
A plugin backend's ``__dlpack_device__`` raises the seed's ``BufferError`` (jax/_src/array.py);
its ``__dlpack__`` and buffer protocol fail in XLA as a TPU's do (a device that is no DLPack
device; no host buffer). Every supported JAX (0.4.30 on) refuses them: DLPack was never
implemented for a TPU's device memory.

The fix for every refused read is the same: hand the consumer ``ensure_exportable(x)`` (the
helper below), which is ``x`` itself where JAX exports its memory (zero-copy on a CPU or GPU)
and a copy on JAX's CPU device where it does not (a TPU, a plugin backend, several devices).
Imports go the other way: ``jax.dlpack.from_dlpack(t)`` of host data (a torch CPU tensor) gives
an array committed to the CPU device even where the default device is a TPU.
"""

from __future__ import annotations

from dataclasses import dataclass

DLPACK_DEVICE = "dlpack-device"
DLPACK = "dlpack"
BUFFER = "buffer"
READS = (DLPACK_DEVICE, DLPACK, BUFFER)

CPU, GPU, TPU = "cpu", "gpu", "tpu"
# Platforms whose arrays every consumer reads; any name not listed here is a plugin backend.
EXPORTING = frozenset({CPU, GPU})
KNOWN = frozenset({CPU, GPU, TPU})
# What a project that declares no platform is checked for (engine.requirements says why).
DEFAULT = frozenset({CPU, GPU})
OPTION = "target-platforms"

# Where JAX's DLPack import of host data lands: a TPU host's CPU device, not the TPU.
IMPORTS_LAND_ON_HOST = frozenset({TPU})


@dataclass(frozen=True)
class Refusal:
    """``platform`` refuses a read of kind ``reads`` with ``error: message``."""

    platform: str
    reads: str
    error: str
    message: str


# The TPU's words, as measured (the probes "torch.from_dlpack(x)", "np.from_dlpack(x)",
# "memoryview(x)"); a plugin backend's, from the seed and the same XLA checks.
_TPU_DEVICE_MESSAGE = "__dlpack__ device only supported for CPU and GPU, got platform: tpu"
_TPU_DLPACK_MESSAGE = "INVALID_ARGUMENT: Device TPU_0(process=0,(0,0,0,0)) cannot be used as a DLPack device."
_BUFFER_MESSAGE = "INVALID_ARGUMENT: Python buffer protocol is only defined for CPU buffers."
REFUSALS: tuple[Refusal, ...] = (
    Refusal(TPU, DLPACK_DEVICE, "BufferError", _TPU_DEVICE_MESSAGE),
    Refusal(TPU, DLPACK, "JaxRuntimeError", _TPU_DLPACK_MESSAGE),
    Refusal(TPU, BUFFER, "BufferError", _BUFFER_MESSAGE),
)


def plugin_refusal(platform: str, reads: str) -> Refusal:
    """What a plugin backend (``metal``, ...) raises for a read of kind ``reads``."""
    if reads == DLPACK_DEVICE:
        message = f"__dlpack__ device only supported for CPU, GPU and TPU pinned host, got platform: {platform}"
        return Refusal(platform, reads, "BufferError", message)
    if reads == DLPACK:
        return Refusal(platform, reads, "JaxRuntimeError", f"INVALID_ARGUMENT: Device {platform.upper()}_0 "
                       "cannot be used as a DLPack device.")
    return Refusal(platform, reads, "BufferError", _BUFFER_MESSAGE)


def parse(value: str | None) -> frozenset[str]:
    """The platforms a ``target-platforms`` option names (comma-separated); the default if none."""
    if not value:
        return DEFAULT
    names = frozenset(part.strip().lower() for part in value.split(",") if part.strip())
    return frozenset(GPU if name in ("cuda", "rocm") else name for name in names) or DEFAULT


def target(options) -> frozenset[str]:
    """The target platforms of a rule's options (``Rule.options``)."""
    return parse((options or {}).get(OPTION))


def refusals(platforms: frozenset[str], reads: str) -> tuple[Refusal, ...]:
    """What each platform of ``platforms`` that refuses a read of kind ``reads`` raises, in name order."""
    found = []
    for platform in sorted(platforms - EXPORTING):
        if platform == TPU:
            found.extend(r for r in REFUSALS if r.platform == TPU and r.reads == reads)
        else:
            found.append(plugin_refusal(platform, reads))
    return tuple(found)


def refuses_exports(platforms: frozenset[str]) -> bool:
    """Whether some platform of ``platforms`` refuses to export device memory."""
    return bool(platforms - EXPORTING)


def imports_land_on_host(platforms: frozenset[str]) -> bool:
    return bool(platforms & IMPORTS_LAND_ON_HOST)


# The helper every fix of a refused read inserts (once per module, or imported from the
# project's helper module). Its body is also tests/interop_helpers.py's, which the TPU probes
# and the execution cases run.
EXPORTABLE_HELPER = "ensure_exportable"
EXPORTABLE_SOURCE = f'''
def {EXPORTABLE_HELPER}(x):
    """``x`` where JAX exports its memory (CPU and GPU arrays); elsewhere a copy on JAX's CPU
    device (added by codemod).

    A TPU's memory, a plugin backend's and an array over several devices have no DLPack export
    and no buffer protocol: JAX says so with ``BufferError`` from ``__dlpack_device__``. The copy
    is a JAX array on the host, which every consumer (DLPack, the buffer protocol) accepts.
    """
    dlpack_device = getattr(x, "__dlpack_device__", None)
    if dlpack_device is None:
        return x
    try:
        dlpack_device()
    except BufferError:
        import jax

        return jax.device_put(x, jax.devices("cpu")[0])
    return x
'''
