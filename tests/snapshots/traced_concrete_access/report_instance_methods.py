# expect: TracerArrayConversionError: numpy.ndarray
"""A traced function builds an instance of the file's class and calls it with its tracer: the
class called at once (`Scaler(2.0)(x)`, its `__call__`), a method of a local instance
(`scaler = Scaler(3.0); scaler.total(x)`), a method of an instance made in the call
(`Scaler(1.0).pointer(x)`). Each method then runs in the trace and reads the tracer on the host.
Each access is reported in the method that makes it, naming the traced function it runs under;
none is fixed (the access would have to move out of the traced function, which is not where it
is written)."""
import jax
import jax.numpy as jnp
import numpy as np


class Scaler:
    def __init__(self, scale):
        self.scale = scale

    def __call__(self, x):
        return jnp.asarray(np.asarray(x) * self.scale)

    def total(self, x):
        return jnp.asarray(np.asarray(x).sum())

    def pointer(self, x):
        return x.unsafe_buffer_pointer()


@jax.jit
def scaled(x):
    return Scaler(2.0)(x)


@jax.jit
def total(x):
    scaler = Scaler(3.0)
    return scaler.total(x)


@jax.jit
def pointer(x):
    return Scaler(1.0).pointer(x)


scaled(jnp.ones(3))
