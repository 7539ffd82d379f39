# expect: BufferError: __dlpack__ only supported for unsharded arrays
# requires: multi-device, torch
"""`torch.as_tensor(x)` and `torch.tensor(x)` of a sharded JAX array: torch 2.x reads it through
DLPack and raises the same BufferError as `torch.from_dlpack` (issue 54: no finding). A list,
or a single-device array, converts as before and is left alone."""
import jax
import jax.numpy as jnp
import torch
from jax.sharding import NamedSharding, PartitionSpec as P

sharding = NamedSharding(jax.sharding.Mesh(jax.devices(), ("data",)), P("data"))
batch = jax.device_put(jnp.arange(8.0), sharding)

viewed = torch.as_tensor(batch)
copied = torch.tensor(batch, dtype=torch.float64)
listed = torch.tensor([1.0, 2.0])
single = torch.as_tensor(jnp.ones(3))

assert float(viewed.sum()) == 28.0 and copied.dtype == torch.float64 and float(copied.sum()) == 28.0
assert float(listed.sum()) == 3.0 and float(single.sum()) == 3.0
