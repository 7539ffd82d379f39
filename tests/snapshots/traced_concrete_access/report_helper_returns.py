# expect: TracerArrayConversionError: numpy.ndarray
"""A tracer that comes back from a helper of the file is still a tracer: `normalize(x)` returns
one because its own taint says so (`x` traced, its `return` computed from `x`), so a helper the
result is then handed to runs on a tracer too. Each sink below is reached only through a helper's
return value: a helper (`step`), a helper of a helper by keyword (`step_scaled`), a method through
`self` (`Normalizer.__call__`), and a lambda helper (`step_clipped`). Reported in the sinks, naming
the traced function; not fixed (the access is not written in the jitted function). A method's
return value read directly (`Normalizer.host`) is reported where it is read, without a fix (an
intermediate of the trace)."""
import functools

import jax
import jax.numpy as jnp
import numpy as np

LOG = []


def normalize(x):
    return (x - x.mean()) / (x.std() + 1e-6)


def scaled(x, factor=2.0):
    return normalize(x) * factor


clipped = lambda x, bound: jnp.clip(x, -bound, bound)  # noqa: E731 - the helper's spelling is the case


def to_host(value):
    return np.asarray(value)


def as_list(value):
    return value.tolist()


def record(value):
    LOG.append(value.tobytes())


def record_pointer(value):
    LOG.append(value.unsafe_buffer_pointer())


@jax.jit
def step(x):
    y = normalize(x)
    return to_host(y)


@jax.jit
def step_scaled(x):
    return as_list(scaled(x=x, factor=3.0))


@jax.jit
def step_clipped(x):
    record_pointer(clipped(x, 1.0))
    return x


class Normalizer:
    def center(self, x):
        return x - x.mean()

    @functools.partial(jax.jit, static_argnums=0)
    def __call__(self, x):
        record(self.center(x))
        return x

    @functools.partial(jax.jit, static_argnums=0)
    def host(self, x):
        return np.asarray(self.center(x))


step(jnp.arange(4.0))
