# expect: BufferError: __dlpack__ only supported for unsharded arrays
# requires: multi-device
"""A small JAX-to-PyTorch bridge in the style of jax2torch: `j2t` knows nothing of its
argument, but every call in the file hands it a sharded array, through a helper that
walks a batch dict and a method that converts its own outputs."""
import jax
import jax.numpy as jnp
import torch
from jax.sharding import NamedSharding, PartitionSpec as P


def j2t(x_jax):
    x_torch = torch.utils.dlpack.from_dlpack(x_jax)
    return x_torch


def batch_to_torch(batch):
    return {name: j2t(value) for name, value in batch.items()}


class Policy:
    def __init__(self, sharding):
        self.sharding = sharding

    def act(self, observation):
        logits = jax.device_put(observation * 2, self.sharding)
        return self._to_torch(logits)

    def _to_torch(self, logits):
        return torch.from_dlpack(logits)


mesh = jax.sharding.Mesh(jax.devices(), ("data",))
sharding = NamedSharding(mesh, P("data"))
batch = {"obs": jax.device_put(jnp.ones((8, 2)), sharding), "reward": jax.device_put(jnp.zeros(8), sharding)}
torch_batch = batch_to_torch(batch)
actions = Policy(sharding).act(jnp.arange(8.0))
assert torch_batch["obs"].shape == (8, 2) and float(actions.sum()) == 56.0
