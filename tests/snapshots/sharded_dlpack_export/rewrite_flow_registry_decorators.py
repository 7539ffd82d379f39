# expect: BufferError: __dlpack__ only supported for unsharded arrays
# requires: multi-device, torch
"""An exporter behind a registry's decorator (`@register("torch")`, which records the function
and hands it back unchanged), called with a sharded batch: the calls are followed into it as
into an undecorated function (issue 54: the decorator hid it, and the export got no finding)."""
import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax.sharding import NamedSharding, PartitionSpec as P

CONVERTERS = {}


def register(name):
    def record(function):
        CONVERTERS[name] = function
        return function

    return record


@register("torch")
def to_torch(array):
    return torch.from_dlpack(array)


@register("numpy")
def to_numpy(array):
    return np.from_dlpack(array)


sharding = NamedSharding(jax.sharding.Mesh(jax.devices(), ("data",)), P("data"))
batch = jax.device_put(jnp.arange(8.0), sharding)

tensor = to_torch(batch)
host = to_numpy(batch)
assert float(tensor.sum()) == 28.0 and float(host.sum()) == 28.0
assert sorted(CONVERTERS) == ["numpy", "torch"]
