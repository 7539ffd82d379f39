# expect: TracerArrayConversionError: numpy.ndarray
"""What a host callback returns comes back into the trace: inside a jitted function the result
of `jax.pure_callback` or `io_callback` is a tracer like any other value there, although the
callback itself ran on NumPy arrays. Converting it to NumPy (or a list) still raises."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import io_callback


def host_double(a):
    return np.asarray(a) * 2  # runs on the host, on a NumPy array: fine


@jax.jit
def via_pure(x):
    y = jax.pure_callback(host_double, jax.ShapeDtypeStruct(x.shape, x.dtype), x)
    return np.asarray(y)


@jax.jit
def via_io(x):
    y = io_callback(host_double, jax.ShapeDtypeStruct(x.shape, x.dtype), x)
    return y.tolist()


via_pure(jnp.arange(3.0))
