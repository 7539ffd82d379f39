import contextlib

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P


class MeshConfig:
    def __init__(self):
        self.mesh = jax.sharding.Mesh(jax.devices(), ("data",))

    def batch_sharding(self):
        return NamedSharding(self.mesh, P("data"))


class Config:
    def __init__(self):
        self.mesh = MeshConfig()


CONFIG = Config()


@contextlib.contextmanager
def staged(values):
    yield jax.device_put(values, CONFIG.mesh.batch_sharding()), jnp.ones(values.shape[0])
