# expect: ConcretizationTypeError: unsafe_buffer_pointer
# fails-on: jax>=0.8.1
import jax
import jax.numpy as jnp

POINTERS = []


# `@jax.jit(...)` with options needs JAX 0.8.1; the fixed file runs on 0.4.30 too.
@jax.jit(static_argnames=("axis",))
def normalize(x, axis):
    POINTERS.append(x.unsafe_buffer_pointer())
    return x / jnp.sum(x, axis=axis, keepdims=True)


x = jnp.ones((2, 2))
assert jnp.allclose(normalize(x, axis=1), 0.5)
assert POINTERS == [x.unsafe_buffer_pointer()] and POINTERS[0] > 0
