# expect: BufferError: __dlpack__ only supported for unsharded arrays
# requires: multi-device
"""Training state in a dataclass, a batch in a NamedTuple and parameters on `self` (placed
with a sharding spelled through `jax._src`), exported for a PyTorch evaluator."""
from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax._src import sharding_impls
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.sharding.Mesh(jax.devices(), ("data",))
data_sharding = NamedSharding(mesh, P("data"))


@dataclass
class TrainState:
    step: int
    params: jax.Array
    opt_state: jax.Array


class Batch(NamedTuple):
    images: jax.Array
    labels: jax.Array


def create_state():
    params = jax.device_put(jnp.ones((8, 4)), data_sharding)
    return TrainState(step=0, params=params, opt_state=jnp.zeros_like(params))


class Evaluator:
    def __init__(self, mesh):
        self.sharding = sharding_impls.NamedSharding(mesh, P("data"))

    def load(self, params):
        self.params = jax.device_put(params, self.sharding)

    def to_torch(self):
        return torch.from_dlpack(self.params)


state = create_state()
params_t = torch.from_dlpack(state.params)

batch = Batch(jax.device_put(jnp.ones((8, 3)), data_sharding), jax.device_put(jnp.arange(8), data_sharding))
labels = np.from_dlpack(batch.labels)

evaluator = Evaluator(mesh)
evaluator.load(np.ones((8, 2), dtype=np.float32))
weights = evaluator.to_torch()

assert params_t.shape == (8, 4) and labels.tolist() == list(range(8))
assert float(weights.sum()) == 16.0
