# expect: ConcretizationTypeError: unsafe_buffer_pointer
import functools

import jax
import jax.numpy as jnp

# Project-wide spellings of the compiler, set once at module level.
jit_static_n = functools.partial(jax.jit, static_argnames=("n",))
compiled = jax.jit

REGISTERED = []


@jit_static_n
def power(x, n):
    REGISTERED.append(("power", x.unsafe_buffer_pointer()))
    return x**n


@compiled
def double(x):
    REGISTERED.append(("double", x.unsafe_buffer_pointer()))
    return 2 * x


x = jnp.arange(3.0)
assert jnp.allclose(power(x, 3), x**3)
assert jnp.allclose(double(x), 2 * x)
assert REGISTERED == [("power", x.unsafe_buffer_pointer()), ("double", x.unsafe_buffer_pointer())]
