# execute: yes
# requires: multi-device
"""The same flows, with values the file proves single-device or that are not JAX arrays:
nothing to gather. A SingleDeviceSharding reached through a dict or a config dataclass, or
a NamedSharding over a one-device mesh, is one device; a parameter annotated with the Sharding base class says nothing (JAX006's
business, not JAX002's)."""
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax.sharding import NamedSharding, PartitionSpec as P, Sharding, SingleDeviceSharding

mesh = jax.sharding.Mesh(jax.devices(), ("data",))
PLACEMENTS = {
    "host": SingleDeviceSharding(jax.devices()[0]),
    "data": NamedSharding(mesh, P("data")),
}


@dataclass
class ExportConfig:
    sharding: Sharding
    dtype: str = "float32"


config = ExportConfig(sharding=SingleDeviceSharding(jax.devices()[0]))

sharded = jax.device_put(jnp.arange(8.0), PLACEMENTS["data"])
gathered = jax.device_put(sharded, PLACEMENTS["host"])
on_host = torch.from_dlpack(gathered)

export_step = jax.jit(lambda x: x * 2, out_shardings=config.sharding)
doubled = np.from_dlpack(export_step(jnp.arange(4.0)))

params = {"w": jnp.ones((2, 2)), "b": jnp.zeros(2)}
for name, value in params.items():
    torch.from_dlpack(value)
torch_params = jax.tree.map(torch.from_dlpack, params)

tensors = {"w": torch.ones(2)}
host_copies = [np.from_dlpack(t) for t in tensors.values()]
images, labels = np.ones(3), torch.zeros(2)
np.from_dlpack(images), np.from_dlpack(labels)


def place(x, sharding: Sharding):
    return torch.from_dlpack(jax.device_put(x, sharding))


def to_torch(x):
    if isinstance(x, torch.Tensor):
        return x
    return torch.from_dlpack(x)


one_device = jax.sharding.Mesh(jax.devices()[:1], ("data",))
on_one = torch.from_dlpack(jax.device_put(np.ones(4), NamedSharding(one_device, P())))

place(np.ones(2), SingleDeviceSharding(jax.devices()[1]))
to_torch(torch.ones(1))
assert on_host.shape == (8,) and doubled[1] == 2.0 and torch_params["w"].shape == (2, 2)
