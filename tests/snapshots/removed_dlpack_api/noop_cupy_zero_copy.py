# requires: gpu, cupy
# execute: yes
"""Correct modern code stays untouched, and on a GPU it is zero-copy into CuPy."""
import cupy
import jax
import jax.numpy as jnp

x = jax.device_put(jnp.arange(16, dtype=jnp.float32), jax.devices("gpu")[0])
c = cupy.from_dlpack(x)
assert c.data.ptr == x.unsafe_buffer_pointer()
assert c.sum().item() == 120.0
