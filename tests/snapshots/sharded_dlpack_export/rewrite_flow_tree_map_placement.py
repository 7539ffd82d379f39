# expect: BufferError: __dlpack__ only supported for unsharded arrays
# requires: multi-device
"""A batch placed leaf by leaf with jax.tree.map (a lambda calling jax.device_put, a helper
that does it for any batch, jax.tree_util.tree_map over a list), then read by key or index:
each leaf spans the mesh. The leaves put on one device are left alone."""
import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.sharding.Mesh(jax.devices(), ("data",))
rows = NamedSharding(mesh, P("data"))


def shard_batch(batch):
    return jax.tree.map(lambda x: jax.device_put(x, rows), batch)


placed = jax.tree.map(lambda x: jax.device_put(x, rows), {"x": np.ones((8, 2), np.float32)})
x_t = torch.from_dlpack(placed["x"])

y_t = torch.from_dlpack(shard_batch({"y": np.arange(8.0)})["y"])

leaves = jax.tree_util.tree_map(lambda x: jax.device_put(x, rows), [jnp.ones(8), jnp.zeros(8)])
first = np.from_dlpack(leaves[0])

local = jax.tree.map(lambda x: jax.device_put(x, jax.devices()[0]), {"z": np.ones(3)})
z_t = torch.from_dlpack(local["z"])

assert float(x_t.sum()) == 16.0 and y_t.tolist() == list(np.arange(8.0))
assert first.tolist() == [1.0] * 8 and z_t.tolist() == [1.0, 1.0, 1.0]
