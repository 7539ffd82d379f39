"""A simulated TPU on a CPU: the execution suite's accelerator in CI, which has none.

``activate("tpu")`` in a process whose JAX sees several forced host devices
(``XLA_FLAGS=--xla_force_host_platform_device_count=5``) makes the last device the host's
CPU device and the others TPU cores, and JAX then behaves as measured on a TPU v5e (``with
simulated("tpu"):`` does the same for a block, and nothing where JAX already runs on a TPU,
real or simulated; ``simulated("metal")`` makes a plugin backend, as the seeds document it):

- ``jax.devices()``, ``jax.local_devices()``, ``jax.device_count()``, ``jax.default_backend()``
  answer for the TPU cores; ``jax.devices("cpu")`` is the host device;
- ``__dlpack_device__`` of an array on a TPU core raises the TPU's ``BufferError``, its
  ``__dlpack__`` the TPU's runtime error (unless ``dl_device`` asks for the CPU: a host copy),
  and the buffer protocol (``memoryview``, ``np.frombuffer``, ``torch.frombuffer``) the TPU's
  ``BufferError``;
- ``jax.dlpack.from_dlpack`` / ``jnp.from_dlpack`` of host data (not a JAX array) give an
  array committed to the host device, as on a TPU host.

Each error's type and text come from ``jax_codemod.analysis.platforms`` (the rules' table);
``tests/test_platform_sim.py`` runs ``tests/platform_probe.py`` under this simulation and holds
every probe's outcome to the newest TPU record under ``.ci/results/tpu/``, so the simulation,
the table and the TPU cannot drift apart unseen. ``memoryview`` is replaced by a stand-in
class (``isinstance`` still works); ``bytes(x)`` is not simulated.
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import sys

DEVICES_NEEDED = 5
_GPU_TYPES = {2: "cuda", 10: "rocm"}
# JAX modules that ask for the CPU backend to place a host callback's arguments (0.4.30's
# debug_callback_impl: `jax.local_devices(backend="cpu")[0]`): on a TPU host, the host.
# Probes the simulation cannot make fail as a TPU does: they read the array's memory through the C
# buffer protocol (bytes(x); torch.asarray takes it), which no Python patch reaches on 3.11. The
# record holds them; tests/test_platform_sim.py compares the rest.
UNSIMULATED = frozenset({"bytes(x)", "torch.asarray(x)"})
_HOST_CALLERS = frozenset({"jax._src.debugging", "jax._src.callback"})  # DLPack device types a TPU host has no backend for
_active: dict = {}


def platform_of_device(device) -> str:
    """The simulated platform of a device: ``cpu`` for the host device, else the simulated one."""
    if not _active:
        return device.platform
    return "cpu" if device == _active["host"] else _active["platform"]


def runtime_error(message: str) -> Exception:
    """jaxlib's runtime error (JaxRuntimeError from 0.4.34, XlaRuntimeError before)."""
    import jax

    error_type = getattr(getattr(jax, "errors", None), "JaxRuntimeError", None)
    if error_type is None:
        from jax._src.lib import xla_client

        error_type = xla_client.XlaRuntimeError
    return error_type(message)


def activate(platform: str = "tpu") -> None:
    """Simulate ``platform`` for the rest of the process."""
    if not _active:
        _patch(platform)


@contextlib.contextmanager
def simulated(platform: str):
    """Simulate ``platform`` inside the block; nothing where JAX already runs on it."""
    import jax

    if jax.default_backend() == platform:
        yield
        return
    saved = dict(_active)
    undo = _patch(platform)
    try:
        yield
    finally:
        undo()
        _active.clear()
        _active.update(saved)


def _patch(platform: str):
    """Patch JAX, NumPy, torch and the builtins to behave as ``platform``; returns the undo."""
    import jax
    import jax._src.xla_bridge as xb
    import jax.numpy as jnp
    from jax_codemod.analysis import platforms

    host = jax.devices("cpu")[-1]
    cores = [device for device in xb.devices() if device != host]
    if not cores:
        raise RuntimeError(f"the simulated {platform} needs several host devices; JAX sees one")
    _active.update(platform=platform, host=host, cores=cores)
    refusal = {
        reads: platforms.refusals(frozenset({platform}), reads)[0] for reads in platforms.READS
    }
    saved: list[tuple[object, str, object]] = []

    def patch(owner, name, value):
        saved.append((owner, name, getattr(owner, name)))
        setattr(owner, name, value)

    def on_host(array) -> bool:
        return all(device == host for device in array.devices())

    def refuse(reads: str):
        r = refusal[reads]
        if r.error == "BufferError":
            return BufferError(r.message)
        return runtime_error(r.message)

    _devices_api(patch, jax, xb, platform, host, cores)
    array_type = type(jnp.zeros(()))
    original_device, original_dlpack = array_type.__dlpack_device__, array_type.__dlpack__

    def dlpack_device(self):
        if on_host(self):
            return original_device(self)
        raise refuse(platforms.DLPACK_DEVICE)

    def dlpack(self, *args, **kwargs):
        dl_device = kwargs.get("dl_device")
        if on_host(self) or len(self.devices()) > 1:  # JAX refuses several devices first, anywhere
            return original_dlpack(self, *args, **kwargs)
        if dl_device is not None:
            kind = int(dl_device[0])
            if kind == 1:  # kDLCPU: a host copy, as a TPU makes
                return original_dlpack(jax.device_put(self, host), *args, **kwargs)
            if kind in _GPU_TYPES:  # a TPU host has no GPU backend
                raise RuntimeError(f"Unknown backend {_GPU_TYPES[kind]}. Available backends are "
                                   f"['{platform}', 'cpu']")
            return original_dlpack(self, *args, **kwargs)  # JAX003's unsupported types, as anywhere
        raise refuse(platforms.DLPACK)

    patch(array_type, "__dlpack_device__", dlpack_device)
    patch(array_type, "__dlpack__", dlpack)
    _buffer_protocol(patch, array_type, on_host, lambda: refuse(platforms.BUFFER))
    if platform in platforms.IMPORTS_LAND_ON_HOST:
        _imports(patch, jax, array_type, host)

    def undo():
        for owner, name, value in reversed(saved):
            setattr(owner, name, value)

    return undo


def _devices_api(patch, jax, xb, platform, host, cores) -> None:
    original = xb.devices

    def answer(backend, caller_frame):
        name = getattr(backend, "platform", backend)
        if name == "cpu":
            caller = caller_frame.f_globals.get("__name__", "")
            if not caller.startswith("jax.") or caller in _HOST_CALLERS:
                return [host]  # the program's CPU device (and a host callback's, as on a TPU host)
            return original(backend)  # JAX's own code (pmap) sees its real backend
        if name in (None, platform):
            return list(cores)
        return original(backend)

    def devices(backend=None):
        return answer(backend, sys._getframe(1))

    def local_devices(process_index=None, backend=None, host_id=None):
        return answer(backend, sys._getframe(1))

    def device_count(backend=None):
        return len(answer(backend, sys._getframe(1)))

    for module in (jax, xb):
        patch(module, "devices", devices)
        patch(module, "local_devices", local_devices)
        patch(module, "device_count", device_count)
        patch(module, "local_device_count", device_count)
        patch(module, "default_backend", lambda: platform)


def _buffer_protocol(patch, array_type, on_host, refuse) -> None:
    import numpy as np

    real_memoryview = getattr(builtins.memoryview, "real", builtins.memoryview)

    def check(obj):
        if isinstance(obj, array_type) and not on_host(obj):
            raise refuse()

    class _Meta(type):
        def __instancecheck__(cls, obj):
            return isinstance(obj, real_memoryview)

        def __subclasscheck__(cls, sub):
            return issubclass(sub, real_memoryview)

    class memoryview(metaclass=_Meta):
        real = real_memoryview

        def __new__(cls, obj):
            check(obj)
            return real_memoryview(obj)

    patch(builtins, "memoryview", memoryview)
    frombuffer = np.frombuffer

    @functools.wraps(frombuffer)
    def np_frombuffer(buffer, *args, **kwargs):
        check(buffer)
        return frombuffer(buffer, *args, **kwargs)

    patch(np, "frombuffer", np_frombuffer)
    try:
        import torch
    except ImportError:
        return
    torch_frombuffer = torch.frombuffer

    @functools.wraps(torch_frombuffer)
    def frombuffer_torch(buffer, *args, **kwargs):
        check(buffer)
        return torch_frombuffer(buffer, *args, **kwargs)

    patch(torch, "frombuffer", frombuffer_torch)


def _imports(patch, jax, array_type, host) -> None:
    """DLPack imports of host data land on the host device, committed (a TPU host's CPU)."""
    import jax._src.dlpack as dlpack_impl
    import jax.dlpack
    import jax.numpy as jnp

    original = dlpack_impl.from_dlpack

    @functools.wraps(original)
    def from_dlpack(external, *args, **kwargs):
        result = original(external, *args, **kwargs)
        if isinstance(external, array_type) or kwargs.get("device") is not None or args:
            return result
        return jax.device_put(result, host)

    for module in (dlpack_impl, jax.dlpack, jnp):
        patch(module, "from_dlpack", from_dlpack)
