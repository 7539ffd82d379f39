# execute: yes
"""Pytree maps where they work: a consumer mapped over the concrete result after the jitted call
returns, JAX's own `jnp.asarray` mapped inside the trace, and a consumer mapped over host
constants there. Nothing is reported."""
import jax
import jax.numpy as jnp
import numpy as np

TABLE = {"bias": np.ones(2)}


@jax.jit
def step(batch):
    arrays = jax.tree.map(jnp.asarray, batch)
    host = jax.tree.map(np.asarray, TABLE)
    return jax.tree.map(lambda a, b: a + b, arrays, {"x": jnp.asarray(host["bias"])})


out = step({"x": jnp.arange(2.0)})
host = jax.tree.map(np.asarray, out)
assert host["x"].tolist() == [1.0, 2.0]
