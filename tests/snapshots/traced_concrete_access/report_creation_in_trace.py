# expect: TracerArrayConversionError: numpy.ndarray
"""Every creation function makes a tracer inside a trace, from no traced argument: the random
keys and `logspace`, `geomspace` and `tri` as `zeros` and `arange` do (one table of them)."""
import jax
import jax.numpy as jnp
import numpy as np


@jax.jit
def sample(x):
    key = np.asarray(jax.random.PRNGKey(0))
    grid = jnp.logspace(0, 1, 4).tolist()
    mask = jnp.tri(3).tolist()
    return x * 2, key, grid, mask


sample(jnp.ones(3))
