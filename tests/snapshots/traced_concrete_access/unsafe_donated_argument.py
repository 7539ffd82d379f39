# expect: ConcretizationTypeError: unsafe_buffer_pointer
import functools

import jax
import jax.numpy as jnp

POINTERS = []


@functools.partial(jax.jit, donate_argnums=0)
def update(state, delta):
    POINTERS.append(state.unsafe_buffer_pointer())
    return state + delta


state = jnp.zeros(3)
expected = state + 1.0
pointer = state.unsafe_buffer_pointer()
out = update(state, jnp.ones(3))
assert jnp.allclose(out, expected)
assert POINTERS == [pointer] and pointer > 0
