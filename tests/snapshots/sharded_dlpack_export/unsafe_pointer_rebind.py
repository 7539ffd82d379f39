# expect: JaxRuntimeError: UnsafeBufferPointer() is supported only for unsharded arrays
# requires: multi-device
"""A raw pointer does not keep the buffer alive: the gathered copy is bound to the variable."""
import ctypes

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.sharding.Mesh(jax.devices()[:4], ("x",))


def read_through_pointer(values):
    x = jax.device_put(jnp.asarray(values, dtype=jnp.float32), NamedSharding(mesh, P("x")))
    # The address goes to C code here; `x` keeps the memory alive meanwhile.
    address = x.unsafe_buffer_pointer()
    return list((ctypes.c_float * x.size).from_address(address))


assert read_through_pointer(np.arange(8.0)) == list(np.arange(8.0))

y = jax.pmap(lambda a: a + 1)(jnp.zeros((4, 1), dtype=jnp.float32))
pointer = y.unsafe_buffer_pointer()
assert list((ctypes.c_float * 4).from_address(pointer)) == [1.0] * 4
