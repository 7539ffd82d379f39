# execute: yes
"""A local jitted function called only inside `with jax.disable_jit():` runs eagerly, on
concrete arrays: its `.item()` and `.tolist()` work (jit alone; vmap still traces there)."""
import jax
import jax.numpy as jnp


def debug_step():
    @jax.jit
    def step(x):
        return x.sum().item()

    def values(x):
        return x.tolist()

    listed = jax.jit(values)
    with jax.disable_jit():
        assert step(jnp.ones(3)) == 3.0
        assert listed(jnp.arange(2.0)) == [0.0, 1.0]
        assert jax.jit(values)(jnp.ones(1)) == [1.0]


debug_step()
