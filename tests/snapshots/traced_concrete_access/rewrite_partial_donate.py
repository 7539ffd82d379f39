# expect: ConcretizationTypeError: addressable_data
from functools import partial as bind

import jax as jx
import jax.numpy as jnp

ADDRESSES = []


@bind(jx.jit, donate_argnums=(1,), static_argnames="axis")
def accumulate(x, acc, axis):
    shard = x.addressable_data(0)
    ADDRESSES.append(shard.unsafe_buffer_pointer())
    return acc + jnp.sum(x, axis=axis)


x = jnp.ones((3, 4))
acc = jnp.zeros(4)
out = accumulate(x, acc, axis=0)
assert jnp.allclose(out, jnp.full(4, 3.0))
assert ADDRESSES == [x.addressable_data(0).unsafe_buffer_pointer()] and ADDRESSES[0] > 0
