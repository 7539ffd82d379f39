import jax.numpy as jnp

from .compile import compiled

REGISTERED = []


@compiled
def power(x, n):
    REGISTERED.append(x.unsafe_buffer_pointer())
    return x**n


def run():
    x = jnp.arange(3.0)
    assert jnp.allclose(power(x, 3), x**3)
    assert REGISTERED == [x.unsafe_buffer_pointer()]
