# expect: ConcretizationTypeError: on_device_size_in_bytes
import functools

import jax
import jax.numpy as jnp

BYTES = {}


@functools.partial(jax.jit, static_argnames="power")
def moment(x, power):
    BYTES["x"] = x.on_device_size_in_bytes()
    return jnp.mean(x**power)


x = jnp.linspace(0.0, 1.0, 8)
assert jnp.allclose(moment(x, power=2), jnp.mean(x**2))
assert BYTES["x"] == x.on_device_size_in_bytes() > 0
