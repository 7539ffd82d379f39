# execute: yes
# requires: multi-device, dlpack-platform
"""The joined twin of rewrite_flow_joined_paths: along every path the value is on one device,
or its sharded path is a test's call that expects the BufferError (`try: ... except
BufferError: ... else: raise AssertionError`), which says nothing of what the helper is given
where it works. Nothing is reported."""
import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax.sharding import NamedSharding, PartitionSpec as P

sharding = NamedSharding(jax.sharding.Mesh(jax.devices(), ("data",)), P("data"))


def to_torch_gathered(values, multi):
    batch = jnp.asarray(values)
    if multi:
        batch = jax.device_put(jax.device_put(batch, sharding), jax.devices()[0])
    return torch.from_dlpack(batch)


def to_host_either(values, first):
    batch = jax.device_put(values, jax.devices()[0]) if first else jnp.asarray(values)
    return np.from_dlpack(batch)


def to_torch(x):
    return torch.from_dlpack(x)


values = jnp.arange(8.0)
assert float(to_torch_gathered(values, True).sum()) == 28.0
assert float(to_host_either(values, False).sum()) == 28.0
assert float(to_torch(values).sum()) == 28.0
try:
    to_torch(jax.device_put(values, sharding))
except BufferError:
    pass
else:
    raise AssertionError("a sharded array cannot be exported")
