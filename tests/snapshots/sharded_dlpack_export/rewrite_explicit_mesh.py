# expect: BufferError: only supported for unsharded arrays
# requires: multi-device, jax>=0.7.1
"""Explicit sharding mode: under `jax.set_mesh`, creation calls place their arrays on the whole mesh.

Both the replicated default (`jnp.ones(8)` is `P(None)` over four devices) and an explicit
`out_sharding=` span several devices, so handing them to torch raises.
"""
import jax
import jax.numpy as jnp
import torch
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((4,), ("data",), axis_types=(AxisType.Explicit,))

with jax.set_mesh(mesh):
    weights = jnp.ones(8)
    bias = jnp.arange(8.0, out_sharding=P("data"))
    torch_weights = torch.from_dlpack(weights)
    torch_bias = torch.from_dlpack(bias)

assert torch.equal(torch_weights, torch.ones(8))
assert torch.equal(torch_bias, torch.arange(8.0))
