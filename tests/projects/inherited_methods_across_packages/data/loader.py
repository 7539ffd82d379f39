import jax.numpy as jnp

from models.base import Sharded


class Loader(Sharded):
    def batch(self, n):
        return jnp.arange(float(n))
