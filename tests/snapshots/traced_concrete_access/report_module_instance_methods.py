# expect: TracerArrayConversionError: numpy.ndarray
"""A traced function calls a method (or the `__call__`) of a module-level instance of a class of
the file: that method runs in the trace, and its access is reported there, naming the traced
caller; none is fixed. An instance name a function rebinds or takes as a parameter, a static
method, and a method that only reads static attributes are left alone."""
import jax
import jax.numpy as jnp
import numpy as np


class Model:
    def __call__(self, x):
        return np.asarray(x).sum()

    def apply(self, x):
        return float(np.asarray(x)[0])

    def rows(self, x):
        return x.shape[0]

    @staticmethod
    def host(x):
        return np.asarray(x)


model = Model()


@jax.jit
def forward(x):
    return model(x) + model.apply(x) + model.rows(x)


@jax.jit
def shadowed(x, model):
    return model.apply(x)


forward(jnp.ones(3))
