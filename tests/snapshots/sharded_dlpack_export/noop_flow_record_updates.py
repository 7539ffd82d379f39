# execute: yes
# requires: multi-device
"""Records updated by copy with single-device arrays, and fields an update leaves alone: nothing
sharded is exported. `dataclasses.replace` with a single-device array replaces the sharded one;
a NamedTuple's `_replace` of another field keeps the single-device one."""
import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax.sharding import NamedSharding, PartitionSpec as P

sharding = NamedSharding(jax.sharding.Mesh(jax.devices(), ("data",)), P("data"))
device = jax.devices()[0]


@dataclasses.dataclass(frozen=True)
class TrainState:
    params: jax.Array
    step: int = 0


class Batch(NamedTuple):
    inputs: jax.Array
    labels: jax.Array


state = TrainState(jax.device_put(jnp.arange(8.0), sharding))
state = dataclasses.replace(state, params=jax.device_put(jnp.arange(8.0), device))
params = torch.from_dlpack(state.params)

batch = Batch(jax.device_put(jnp.ones(8), device), jnp.zeros(8))
relabeled = batch._replace(labels=jax.device_put(jnp.ones(8), sharding))
inputs = np.from_dlpack(relabeled.inputs)

assert float(params.sum()) == 28.0 and float(inputs.sum()) == 8.0
