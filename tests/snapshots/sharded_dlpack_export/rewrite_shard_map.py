# expect: BufferError: __dlpack__ only supported for unsharded arrays
# requires: multi-device
# requires: jax>=0.6.1
"""shard_map outputs, spelled through `from jax import shard_map` and functools.partial."""
import functools

import jax
import jax.numpy as jnp
import torch
from jax import shard_map
from jax.sharding import PartitionSpec as P

mesh = jax.sharding.Mesh(jax.devices(), ("x",))


@functools.partial(shard_map, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
def local_cumsum(block):
    return jnp.cumsum(block)


blocks = local_cumsum(jnp.arange(8.0))
expected = torch.tensor([0.0, 1.0, 2.0, 5.0, 4.0, 9.0, 6.0, 13.0])
assert torch.equal(torch.from_dlpack(blocks), expected)

scaled = jax.shard_map(lambda b: b * 3, mesh=mesh, in_specs=P("x"), out_specs=P("x"))(jnp.ones(8))
assert torch.from_dlpack(scaled).sum().item() == 24.0
