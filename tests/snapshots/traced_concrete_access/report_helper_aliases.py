# expect: TracerArrayConversionError: numpy.ndarray
"""Helpers reached in other spellings from a trace: a module-level keyword-only partial of a
helper (`double_host = functools.partial(scaled_host, scale=2.0)`) called with the tracer, and a
helper handed a dict that holds the tracer (`host_of({"x": x})`). Each helper converts what it
gets to NumPy, which raises in the trace; reported in the helper, naming the traced caller."""
import functools

import jax
import jax.numpy as jnp
import numpy as np


def host_of(batch):
    return np.asarray(batch["x"])


def scaled_host(x, scale=1.0):
    return np.asarray(x) * scale


double_host = functools.partial(scaled_host, scale=2.0)


@jax.jit
def from_dict(x):
    return host_of({"x": x})


@jax.jit
def through_alias(x):
    return double_host(x)


from_dict(jnp.arange(4.0))
