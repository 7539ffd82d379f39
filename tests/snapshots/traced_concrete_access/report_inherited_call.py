# expect: TracerArrayConversionError: numpy.ndarray
"""A subclass that inherits `__call__` from a base class of the file, instantiated inside the
trace (`head = Head(); head(x)`): the base's `__call__` runs on the tracer. Reported in the
base's method, naming the traced function; not fixed."""
import jax
import jax.numpy as jnp
import numpy as np


class Base:
    def __call__(self, x):
        return jnp.asarray(np.asarray(x) * 2)


class Head(Base):
    pass


@jax.jit
def forward(x):
    head = Head()
    return head(x)


forward(jnp.ones(3))
