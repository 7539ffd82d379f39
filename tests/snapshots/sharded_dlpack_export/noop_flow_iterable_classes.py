# execute: yes
# requires: multi-device
"""Data-loader classes whose batches are on one device, or are no JAX arrays: iterating them
exports nothing sharded. A class's own `__iter__` decides what its elements are, not its fields
(`HostBatches` holds sharded arrays and yields host copies); a NamedTuple, with no `__iter__` of
its own, is iterated over its fields."""
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.sharding.Mesh(jax.devices(), ("data",))
sharding = NamedSharding(mesh, P("data"))
device = jax.devices()[0]


class Loader:
    def __init__(self, count):
        self.count = count

    def __iter__(self):
        for step in range(self.count):
            yield jax.device_put(jnp.full((8, 2), float(step)), device)


class HostBatches:
    def __init__(self, count):
        # Sharded, but what iterating yields is each one gathered to the host first.
        self.sharded = [jax.device_put(jnp.full((8,), float(step)), sharding) for step in range(count)]

    def __iter__(self):
        for batch in self.sharded:
            yield np.asarray(batch)


class Pair(NamedTuple):
    host: np.ndarray
    count: int


total = 0.0
for batch in Loader(3):
    total += float(torch.from_dlpack(batch).sum())

hosted = [float(torch.from_dlpack(batch).sum()) for batch in HostBatches(2)]
first, _ = Pair(np.ones(4, np.float32), 1)
pair = Pair(np.zeros(2, np.float32), 2)
shapes = [np.from_dlpack(pair[0]).shape for _ in pair]

assert total == 16 * (0 + 1 + 2)
assert hosted == [0.0, 8.0]
assert first.shape == (4,) and shapes == [(2,), (2,)]
