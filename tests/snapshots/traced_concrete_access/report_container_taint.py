# expect: TracerArrayConversionError: numpy.ndarray
"""Tracers gathered into a dict or a comprehension inside a trace, then read out and converted
to NumPy: each conversion raises (TracerArrayConversionError). Metrics dicts built in a jitted
step are the common shape."""
import jax
import jax.numpy as jnp
import numpy as np


@jax.jit
def summarize(x):
    stats = {"mean": x.mean(), "std": x.std()}
    return {k: np.asarray(v) for k, v in stats.items()}


@jax.jit
def scaled(xs):
    ys = [v * 2 for v in xs]
    return np.asarray(ys[0])


summarize(jnp.arange(4.0))
