# expect: TracerArrayConversionError: numpy.ndarray
"""Helpers bound to a lambda at module level run in the trace of the jitted functions that call
them, as `def` helpers do: `to_host(x)` inside `step` converts a tracer to NumPy. Reported in
the lambda, naming the traced function; not fixed (the access would have to move out of `step`,
which is not where it is written). A lambda that only computes (`double`) is nothing."""
import jax
import jax.numpy as jnp
import numpy as np

to_host = lambda value: np.asarray(value)  # noqa: E731 - the helper's spelling is the case
double = lambda value: value * 2  # noqa: E731


@jax.jit
def step(x):
    return double(x) + 1, to_host(x)


step(jnp.arange(4.0))
