# expect: BufferError: __dlpack__ only supported for unsharded arrays
# requires: multi-device
"""Records that export their own fields: a NamedTuple's method reading `self.images` (and a
property), and a function whose parameter is annotated with a dataclass, each given an
instance built from sharded arrays by the file."""
from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.sharding.Mesh(jax.devices(), ("data",))
rows = NamedSharding(mesh, P("data"))


class Batch(NamedTuple):
    images: jax.Array
    labels: jax.Array

    def to_torch(self):
        return torch.from_dlpack(self.images), torch.from_dlpack(self.labels)

    @property
    def labels_np(self):
        return np.from_dlpack(self.labels)


@dataclass
class TrainState:
    step: int
    params: jax.Array


def export_params(state: TrainState) -> torch.Tensor:
    return torch.from_dlpack(state.params)


batch = Batch(images=jax.device_put(jnp.ones((8, 3)), rows), labels=jax.device_put(jnp.arange(8), rows))
images_t, labels_t = batch.to_torch()
labels_np = batch.labels_np

params_t = export_params(TrainState(0, jax.device_put(jnp.full((8, 2), 2.0), rows)))

assert images_t.shape == (8, 3) and labels_t.tolist() == list(range(8))
assert labels_np.sum() == 28 and float(params_t.sum()) == 32.0
