import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

MESH = Mesh(np.array(jax.devices()[:4]), ("batch",))
SHARDING = NamedSharding(MESH, PartitionSpec("batch"))


class ShardedLoader:
    """Yields `steps` batches of 8 rows, split over the mesh."""

    def __init__(self, steps):
        self.steps = steps

    def __iter__(self):
        for step in range(self.steps):
            yield jax.device_put(jnp.full((8, 4), float(step), jnp.float32), SHARDING)


class Countdown:
    """An iterator of its own: each `next` places one more batch."""

    def __init__(self, left):
        self.left = left

    def __iter__(self):
        return self

    def __next__(self):
        if not self.left:
            raise StopIteration
        self.left -= 1
        return jax.device_put(jnp.full((8,), float(self.left), jnp.float32), SHARDING)
