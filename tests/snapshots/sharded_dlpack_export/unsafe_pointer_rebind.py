# expect: JaxRuntimeError: UnsafeBufferPointer() is supported only for unsharded arrays
"""A raw pointer does not keep the buffer alive: the gathered copy is bound to the variable."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((4,), ("x",))


def pointer_of(values):
    x = jax.device_put(jnp.asarray(values), NamedSharding(mesh, P("x")))
    # The address goes to a C library here.
    address = x.unsafe_buffer_pointer()
    return address, x


address, kept = pointer_of(np.arange(8.0))
assert address > 0
assert address == kept.unsafe_buffer_pointer()
assert np.array_equal(np.asarray(kept), np.arange(8.0))
