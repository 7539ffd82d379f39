# expect: BufferError: __dlpack__ device only supported for CPU, GPU and TPU pinned host
# requires: gpu, cupy
"""CuPy consumers fall back to cupy.asarray of the host copy."""
import contextlib

import jax
import jax.numpy as jnp


@contextlib.contextmanager
def plugin_backend():
    """jax.Array exports fail the way they do on a backend without DLPack (the seed's error)."""
    array_type = type(jnp.zeros(()))
    saved = {name: array_type.__dict__[name] for name in ("__dlpack__", "__dlpack_device__")}

    def refuse(self, *args, **kwargs):
        raise BufferError("__dlpack__ device only supported for CPU, GPU and TPU pinned host, got platform: METAL")

    for name in saved:
        setattr(array_type, name, refuse)
    try:
        yield
    finally:
        for name, method in saved.items():
            setattr(array_type, name, method)
import cupy


def to_cupy(x: jax.Array):
    c = cupy.from_dlpack(x)
    return c, cupy.from_dlpack(x).sum()


x = jnp.arange(4.0, dtype=jnp.float32)
fast = to_cupy(x)
with plugin_backend():
    slow = to_cupy(x)
assert cupy.array_equal(fast[0], slow[0]) and slow[0].dtype == cupy.float32
assert float(fast[1]) == float(slow[1]) == 6.0
