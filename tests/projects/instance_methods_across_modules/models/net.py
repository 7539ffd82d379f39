import jax.numpy as jnp
import numpy as np


class Net:
    def __init__(self, scale):
        self.scale = scale

    def __call__(self, x):
        return jnp.asarray(np.asarray(x) * self.scale)

    def encode(self, x):
        return jnp.asarray(np.asarray(x).sum() * self.scale)

    def shape_of(self, x):
        return x.shape  # static under a trace: no error
