# expect: TracerArrayConversionError: numpy.ndarray
"""`jax.device_get`, `jax.device_put` and `jax.block_until_ready` inside a trace return the
tracer they are given: a tracer has no buffer to fetch to the host, to place or to wait for. So
converting what they return to NumPy still raises (TracerArrayConversionError), on every
supported release; code that "fetches to host first" in a jitted step is the common shape."""
import jax
import jax.numpy as jnp
import numpy as np

cpu = jax.devices("cpu")[0]


@jax.jit
def fetched(x):
    host = jax.device_get(x)
    return jnp.asarray(np.asarray(host) * 2)


@jax.jit
def logged(x):
    stats = {"x": jax.device_get(x.mean())}
    return x, np.asarray(stats["x"])


@jax.jit
def placed(x):
    return np.asarray(jax.device_put(x, cpu))


@jax.jit
def waited(x):
    ready = jax.block_until_ready(x * 2)
    return np.asarray(ready)


class Logger:
    def __init__(self):
        self.last = None

    def record(self, x):
        self.last = jax.device_get(x)
        return np.asarray(self.last)


LOG = Logger()


@jax.jit
def step(x):
    LOG.record(x)
    return x * 2


@jax.jit
def collected(x):
    seen = []
    seen.append(jax.device_get(x))
    return np.asarray(seen[0])


fetched(jnp.arange(3.0))
