# option: target-platforms=cpu,gpu,metal
# expect: BufferError: __dlpack__ device only supported for CPU, GPU and TPU pinned host
# requires: gpu, cupy
"""CuPy consumers fall back to cupy.asarray of the host copy."""
import jax
import jax.numpy as jnp
from plugin_backend import plugin_backend
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
