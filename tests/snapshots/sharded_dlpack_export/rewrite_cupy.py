# expect: BufferError: __dlpack__ only supported for unsharded arrays
# requires: gpu, cupy, multi-device
"""cupy.from_dlpack of a pmapped result."""
import cupy
import jax
import jax.numpy as jnp

doubled = jax.pmap(lambda a: a * 2)(jnp.ones((jax.local_device_count(), 2)))
on_cupy = cupy.from_dlpack(doubled)
assert float(on_cupy.sum()) == 4.0 * jax.local_device_count()
