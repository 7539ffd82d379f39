# expect: JaxRuntimeError: UnsafeBufferPointer() is supported only for unsharded arrays
# requires: multi-device
"""A raw pointer of a parameter: the gathered copy is bound to the parameter first."""
import ctypes

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P


def first_element(buffer: jax.Array) -> float:
    address = buffer.unsafe_buffer_pointer()
    # Read through the pointer while `buffer` (the gathered copy) is alive.
    return ctypes.c_float.from_address(address).value


def returned_pointer(buffer: jax.Array) -> int:
    # Reported only: a local copy would be freed when the function returns.
    return buffer.unsafe_buffer_pointer()


mesh = jax.sharding.Mesh(jax.devices()[:4], ("x",))
x = jax.device_put(jnp.arange(3.0, 11.0), NamedSharding(mesh, P("x")))
assert first_element(x) == 3.0
assert first_element(jnp.full(2, 7.0)) == 7.0
