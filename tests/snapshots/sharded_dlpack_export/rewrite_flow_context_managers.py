# expect: BufferError: __dlpack__ only supported for unsharded arrays
# requires: multi-device
"""Sharded arrays bound by `with ... as name`: what a class's `__enter__` returns, and what a
`contextlib.contextmanager` generator yields, exported inside the block."""
import contextlib

import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax.sharding import NamedSharding, PartitionSpec as P

sharding = NamedSharding(jax.sharding.Mesh(jax.devices(), ("data",)), P("data"))


class Staged:
    def __init__(self, values):
        self.values = values

    def __enter__(self):
        return jax.device_put(self.values, sharding)

    def __exit__(self, *exc_info):
        return False


@contextlib.contextmanager
def placed(values):
    yield jax.device_put(values, sharding)


with Staged(jnp.arange(8.0)) as staged:
    tensor = torch.from_dlpack(staged)

with placed(jnp.ones(8)) as ones:
    host = np.from_dlpack(ones)

assert float(tensor.sum()) == 28.0 and float(host.sum()) == 8.0
