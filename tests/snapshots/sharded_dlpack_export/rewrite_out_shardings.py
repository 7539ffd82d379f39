# expect: BufferError: to_dlpack can only pack a dlpack tensor from an array on a singular device
# requires: multi-device
"""Results of jit with out_shardings, as a variable or a decorator, into NumPy."""
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.sharding.Mesh(jax.devices()[:4], ("x",))
sharded = NamedSharding(mesh, P("x"))
add_one = jax.jit(lambda a: a + 1, out_shardings=sharded)


@partial(jax.jit, out_shardings=sharded)
def square(a):
    return a * a


def to_host(a):
    result = add_one(a)
    return np.from_dlpack(result)


assert np.array_equal(to_host(jnp.arange(8.0)), np.arange(8.0) + 1)
squares = square(jnp.arange(8.0))
assert np.array_equal(np.from_dlpack(squares), np.arange(8.0) ** 2)
