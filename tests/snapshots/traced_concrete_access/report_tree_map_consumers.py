# expect: TracerArrayConversionError: numpy.ndarray
"""A pytree map of a consumer over a traced tree whose result the jitted function returns:
the map raises inside the trace, and hoisting it would change what the function computes, so it
is reported without a fix."""
import jax
import jax.numpy as jnp
import numpy as np


@jax.jit
def to_host(batch):
    return jax.tree.map(np.asarray, batch)


@jax.jit
def stats(x):
    moments = {"mean": x.mean(), "var": x.var()}
    return jax.tree.map(np.asarray, moments)


to_host({"x": jnp.arange(3.0)})
