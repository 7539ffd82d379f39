# execute: yes
# requires: multi-device
"""Properties and cached functions whose arrays are on one device: nothing to gather. A cached
function that takes an array is not followed into (it hashes its arguments: a JAX array raises
TypeError there), and a property's setter says nothing of what the getter returns."""
import functools

import jax
import jax.numpy as jnp
import numpy as np
import torch


@functools.lru_cache(maxsize=4)
def one_device():
    return jax.devices()[0]


@functools.cache
def table(size):
    return jax.device_put(jnp.arange(float(size)), one_device())


class Holder:
    def __init__(self, sharded):
        self._sharded = sharded

    @property
    def host(self):
        return np.asarray(self._sharded)

    @property
    def local(self):
        return jax.device_put(self._sharded, one_device())

    @local.setter
    def local(self, value):
        self._sharded = value


mesh = jax.sharding.Mesh(jax.devices(), ("data",))
holder = Holder(jax.device_put(jnp.ones(8), jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("data"))))
host = torch.from_dlpack(holder.host)
local = np.from_dlpack(holder.local)
values = np.from_dlpack(table(4))

assert float(host.sum()) == 8.0 and float(local.sum()) == 8.0 and float(values.sum()) == 6.0
