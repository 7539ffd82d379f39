"""Values whose sharding the file does not know are JAX006's business, never JAX002's."""
import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((4,), ("x",))


def export(value: jax.Array, other):
    return torch.from_dlpack(value), np.from_dlpack(other)


def maybe_gathered(flag, values):
    x = jax.device_put(values, NamedSharding(mesh, P("x")))
    if flag:
        x = jax.device_put(x, jax.devices()[0])
    return torch.from_dlpack(x)


def reassigned(values):
    x = jax.device_put(values, NamedSharding(mesh, P("x")))
    x = np.asarray(x)
    return np.from_dlpack(x)


def loop(batches):
    for x in batches:
        yield torch.from_dlpack(x)


class Holder:
    def __init__(self, values):
        self.x = jax.device_put(values, NamedSharding(mesh, P("x")))

    def export(self):
        return torch.from_dlpack(self.x)
