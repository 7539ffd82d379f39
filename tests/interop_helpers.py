"""The helper module that `# option: helper-module=interop_helpers` cases import.

Executed cases run with tests/ on sys.path; the body must stay the one the rules insert
(tests/test_sharded_dlpack_export.py checks).
"""


def ensure_single_device(x):
    """Gather a multi-device JAX array onto one of its own devices (added by codemod).

    DLPack and raw buffer pointers describe one device's memory. The lowest-id device of
    the array's own sharding is used, so no copy crosses backends; anything that is not
    a multi-device JAX array, or spans processes, is returned unchanged.
    """
    devices = getattr(getattr(x, "sharding", None), "device_set", None)
    if devices is None or len(devices) <= 1 or not getattr(x, "is_fully_addressable", True):
        return x
    import jax

    return jax.device_put(x, min(devices, key=lambda device: device.id))
