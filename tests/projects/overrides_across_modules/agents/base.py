from functools import partial

import jax
import jax.numpy as jnp


class Agent:
    @partial(jax.jit, static_argnums=0)
    def update(self, batch):
        return self.on_batch(batch) + 1.0

    def on_batch(self, batch):
        return jnp.mean(batch)
