# expect: ConcretizationTypeError: unsafe_buffer_pointer
import functools

import jax
import jax.numpy as jnp

SEEN = []


@functools.partial(jax.jit, static_argnums=(1,), static_argnames=("mode",))
def reduce(x: jax.Array, n: int = 2, *, mode: str = "sum") -> jax.Array:
    SEEN.append((mode, n, x.unsafe_buffer_pointer()))
    powered = x**n
    if mode == "sum":
        return jnp.sum(powered)
    return jnp.max(powered)


x = jnp.arange(5.0)
assert jnp.allclose(reduce(x), jnp.sum(x**2))
assert jnp.allclose(reduce(x, 3, mode="max"), jnp.max(x**3))
assert jnp.allclose(reduce(x, n=3), jnp.sum(x**3))
assert [entry[:2] for entry in SEEN] == [("sum", 2), ("max", 3), ("sum", 3)]
assert all(entry[2] == x.unsafe_buffer_pointer() > 0 for entry in SEEN)
