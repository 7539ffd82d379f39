# expect: BufferError: __dlpack__ only supported for unsharded arrays
# requires: multi-device
"""A value that is a sharded array along one path and something else along another: placed
only on several devices (`if multi: x = jax.device_put(x, sharding)`), gathered only under a
flag, taken from a cache or placed, and a helper called with a sharded batch as well as a
single-device one. The export raises on the sharded path; gathering is right on every path."""
import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax.sharding import NamedSharding, PartitionSpec as P

sharding = NamedSharding(jax.sharding.Mesh(jax.devices(), ("data",)), P("data"))
_cache = {}


def to_torch_placed(values, multi):
    batch = jnp.asarray(values)
    if multi:
        batch = jax.device_put(batch, sharding)
    return torch.from_dlpack(batch)


def to_host_either(values, multi):
    batch = jax.device_put(values, sharding) if multi else jnp.asarray(values)
    return np.from_dlpack(batch)


def maybe_gathered(values, flag):
    x = jax.device_put(values, sharding)
    if flag:
        x = jax.device_put(x, jax.devices()[0])
    return torch.from_dlpack(x)


def cached(key, values):
    batch = _cache.get(key)
    if batch is None:
        batch = _cache[key] = jax.device_put(values, sharding)
    return torch.from_dlpack(batch)


def to_torch(x):
    return torch.from_dlpack(x)


values = jnp.arange(8.0)
assert float(to_torch_placed(values, True).sum()) == 28.0
assert float(to_torch_placed(values, False).sum()) == 28.0
assert float(to_host_either(values, True).sum()) == 28.0
assert float(maybe_gathered(values, False).sum()) == 28.0
assert float(maybe_gathered(values, True).sum()) == 28.0
assert float(cached("a", values).sum()) == 28.0
assert float(to_torch(jnp.ones(3)).sum()) == 3.0
assert float(to_torch(jax.device_put(values, sharding)).sum()) == 28.0
