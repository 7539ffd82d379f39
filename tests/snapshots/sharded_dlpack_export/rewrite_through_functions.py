# expect: BufferError: __dlpack__ only supported for unsharded arrays
# requires: multi-device
# requires: jax>=0.6.1
"""Values followed through module functions, jit of a shard_map, tuples and reassignments."""
import jax
import jax.numpy as jnp
import torch
from jax.sharding import PartitionSpec as P

mesh = jax.sharding.Mesh(jax.devices(), ("x",))
per_shard = jax.shard_map(lambda b: (b + 1, b * 2), mesh=mesh, in_specs=P("x"), out_specs=(P("x"), P("x")))
compiled = jax.jit(per_shard)


def forward(a):
    return compiled(a)


def export_both(a):
    plus, times = forward(a)
    plus = plus - 1
    return torch.from_dlpack(plus), torch.from_dlpack(times[::2])


def export_first(a):
    return torch.from_dlpack(forward(a)[0])


left, right = export_both(jnp.arange(8.0))
assert torch.equal(left, torch.arange(8.0))
assert torch.equal(right, torch.arange(0.0, 16.0, 4.0))
assert torch.equal(export_first(jnp.zeros(8)), torch.ones(8))

# Closures and comprehensions see the module's sharded values.
spread = jax.device_put(jnp.arange(8.0), jax.sharding.NamedSharding(mesh, P("x")))


def closure():
    return torch.from_dlpack(spread)


assert torch.equal(closure(), torch.arange(8.0))
assert all(torch.equal(t, torch.arange(8.0)) for t in [torch.from_dlpack(spread) for _ in range(2)])
