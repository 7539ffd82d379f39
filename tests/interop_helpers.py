"""The helper module that `# option: helper-module=interop_helpers` cases import.

Executed cases run with tests/ on sys.path; the body must stay the one the rules insert
(tests/test_sharded_dlpack_export.py checks).
"""


def ensure_single_device(x):
    """Gather a multi-device JAX array onto one device (added by codemod).

    DLPack and raw buffer pointers describe one device's memory. The lowest-id device of
    the array's own sharding is used, so no copy crosses backends, unless that platform
    exports nothing (a TPU, a plugin backend): then JAX's CPU device. Anything that is not
    a multi-device JAX array, or spans processes, is returned unchanged.
    """
    devices = getattr(getattr(x, "sharding", None), "device_set", None)
    if devices is None or len(devices) <= 1 or not getattr(x, "is_fully_addressable", True):
        return x
    import jax

    try:
        x.addressable_shards[0].data.__dlpack_device__()
    except BufferError:  # this platform's memory has no export: gather on the host
        return jax.device_put(x, jax.devices("cpu")[0])
    return jax.device_put(x, min(devices, key=lambda device: device.id))


def ensure_exportable(x):
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
