# expect: BufferError: __dlpack__ only supported for unsharded arrays
# requires: multi-device
"""Sharded arrays read through a property (`state.batch` runs its getter; a setter beside it
gives no value) and returned by cached functions: a `functools.lru_cache` sharding factory that
places the batch, and a `functools.cache` loader."""
import functools

import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax.sharding import NamedSharding, PartitionSpec as P


@functools.lru_cache(maxsize=None)
def data_sharding():
    return NamedSharding(jax.sharding.Mesh(jax.devices(), ("data",)), P("data"))


@functools.cache
def eval_batch():
    return jax.device_put(jnp.arange(8.0), data_sharding())


class TrainState:
    def __init__(self, step):
        self._step = step

    @property
    def batch(self):
        return jax.device_put(jnp.full((8, 2), float(self._step)), data_sharding())

    @property
    def step(self):
        return self._step

    @step.setter
    def step(self, value):
        self._step = value


state = TrainState(2)
state.step = 3
rows = torch.from_dlpack(state.batch)
evaluated = np.from_dlpack(eval_batch())
placed = jax.device_put(jnp.ones(8), data_sharding())
ones = np.from_dlpack(placed)

assert float(rows.sum()) == 48.0
assert float(evaluated.sum()) == 28.0 and float(ones.sum()) == 8.0
