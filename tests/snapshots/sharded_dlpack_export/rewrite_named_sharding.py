# expect: BufferError: __dlpack__ only supported for unsharded arrays
# requires: multi-device
"""device_put with a NamedSharding, inline or through a sharding variable, into torch."""
import jax
import jax.numpy as jnp
import numpy as np
import torch
import torch.utils.dlpack
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.sharding.Mesh(jax.devices()[:4], ("x",))
row_sharding = NamedSharding(mesh, P("x"))

x = jax.device_put(jnp.arange(8.0), row_sharding)
t = torch.from_dlpack(x)
assert torch.equal(t, torch.arange(8.0))

# The sharding spelled inline, and the older torch.utils entry point.
y = jax.device_put(np.ones((4, 2), np.float32), jax.sharding.NamedSharding(mesh, P("x", None)))
u = torch.utils.dlpack.from_dlpack(y)
assert u.shape == (4, 2) and u.sum().item() == 8.0

# Arithmetic on a sharded array stays sharded.
assert torch.equal(torch.from_dlpack(x * 2 + 1), torch.arange(8.0) * 2 + 1)
assert torch.equal(torch.from_dlpack(-x), -torch.arange(8.0))
