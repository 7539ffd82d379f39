# option: target-platforms=cpu,gpu,metal
# expect: JaxRuntimeError: cannot be used as a DLPack device
"""NumPy consumers; numpy is not imported yet, so `import numpy as np` is added."""
import jax
import jax.numpy as jnp
from plugin_backend import plugin_backend
from numpy import array_equal, from_dlpack


def host_view():
    y = jnp.linspace(0.0, 1.0, 4, dtype=jnp.float32)
    return y, from_dlpack(y)


def flags():
    return from_dlpack(jnp.array([True, False, True]))


y, fast = host_view()
if jax.default_backend() == "cpu":  # zero-copy stays where JAX exports (on a TPU: a host copy)
    assert fast.ctypes.data == y.unsafe_buffer_pointer(), "CPU keeps the zero-copy path"
with plugin_backend():
    _, slow = host_view()
    slow_flags = flags()
assert array_equal(slow, fast) and slow.dtype == fast.dtype
assert slow_flags.tolist() == [True, False, True] and slow_flags.dtype == bool
