# expect: JaxRuntimeError: UnsafeBufferPointer() is supported only for unsharded arrays
"""A raw pointer of a parameter: the gathered copy is bound to the parameter first."""
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P


def address_of(buffer: jax.Array) -> int:
    address = buffer.unsafe_buffer_pointer()
    assert buffer.unsafe_buffer_pointer() == address
    return address


mesh = jax.make_mesh((4,), ("x",))
x = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("x")))
assert address_of(x) > 0
assert address_of(jnp.ones(2)) > 0
