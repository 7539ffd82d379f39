import jax
import jax.numpy as jnp

import tools


@jax.jit
def step(x):
    return tools.to_host(x) * 2.0


def run():
    step(jnp.ones(3))
