import jax.numpy as jnp

import pkg
from pkg import model

from .model import step


def run():
    x = jnp.arange(3.0)
    assert jnp.allclose(step(x), x * 2.0)
    step.clear_cache()
    compiled = model.scale.lower(x).compile()
    assert jnp.allclose(compiled(x), x * 3.0)
    assert jnp.allclose(pkg.center(x), x - 1.0)
    assert getattr(pkg.center, "_cache_size")() == 1
    assert len(model.REGISTERED) == 3
