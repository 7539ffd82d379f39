# expect: ConcretizationTypeError: unsafe_buffer_pointer
import math

import jax
import jax.numpy as jnp

CALLS = []


def gemm(pointer, rows, count):
    CALLS.append((pointer, rows, count))


@jax.jit
def project(x, w):
    rows = x.shape[0]
    count = math.prod(x.shape)
    # The native kernel takes the address and the static sizes.
    gemm(x.unsafe_buffer_pointer(), rows, count)
    return (x @ w).reshape(rows, -1)


x, w = jnp.ones((2, 3)), jnp.ones((3, 4))
out = project(x, w)
assert jnp.allclose(out, jnp.full((2, 4), 3.0))
assert CALLS == [(x.unsafe_buffer_pointer(), 2, 6)] and CALLS[0][0] > 0
