# expect: BufferError: __dlpack__ only supported for unsharded arrays
# requires: multi-device
# option: helper-module=interop_helpers
"""With helper-module set, the helper is imported from the project's module instead."""
import jax
import jax.numpy as jnp
import torch
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.sharding.Mesh(jax.devices()[:4], ("x",))
x = jax.device_put(jnp.arange(4.0), NamedSharding(mesh, P("x")))
assert torch.equal(torch.from_dlpack(x), torch.arange(4.0))
assert torch.equal(torch.from_dlpack(x + x), torch.arange(4.0) * 2)
