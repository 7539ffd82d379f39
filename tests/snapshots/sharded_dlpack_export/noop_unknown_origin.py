"""Values whose sharding the file does not know are JAX006's business, never JAX002's."""
import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.sharding.Mesh(jax.devices()[:4], ("x",))


def export(value: jax.Array, other):
    return torch.from_dlpack(value), np.from_dlpack(other)


def reassigned(values):
    x = jax.device_put(values, NamedSharding(mesh, P("x")))
    x = np.asarray(x)
    return np.from_dlpack(x)


def loop(batches):
    for x in batches:
        yield torch.from_dlpack(x)


def rebound_by_loops(values, batches, items):
    x = jax.device_put(values, NamedSharding(mesh, P("x")))
    for x in batches:
        torch.from_dlpack(x)
    with open(items) as x:
        np.from_dlpack(x)


x = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("x")))
tensors = [torch.from_dlpack(x) for x in range(3)]
arrays = {x: np.from_dlpack(x) for x in tensors}


def shadowing_parameter(x):
    return torch.from_dlpack(x), (lambda x: np.from_dlpack(x))(x)
