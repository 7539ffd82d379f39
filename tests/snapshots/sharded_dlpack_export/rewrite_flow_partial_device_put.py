# expect: BufferError: __dlpack__ only supported for unsharded arrays
# requires: multi-device
"""Arrays placed through an alias of `jax.device_put` that binds the sharding ahead, as input
pipelines write it: `functools.partial(jax.device_put, device=...)` (also spelled `partial`
and given the sharding in the call, and mapped over a tree of host arrays), then exported to
PyTorch and NumPy."""
import functools
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.sharding.Mesh(jax.devices(), ("data",))
shard_rows = functools.partial(jax.device_put, device=NamedSharding(mesh, P("data")))
place = partial(jax.device_put)


def load_batch(step):
    images = np.arange(16.0, dtype=np.float32).reshape(8, 2) + step
    return shard_rows(images)


batch = load_batch(0)
images_t = torch.from_dlpack(batch)

labels = place(jnp.arange(8), NamedSharding(mesh, P("data")))
labels_np = np.from_dlpack(labels)

tree = jax.tree.map(shard_rows, {"x": np.ones((8, 2), np.float32), "y": np.zeros(8, np.float32)})
tensors = jax.tree.map(torch.from_dlpack, tree)

assert images_t.shape == (8, 2) and float(images_t[3, 1]) == 7.0
assert float(tensors["x"].sum()) == 16.0 and tensors["y"].shape == (8,)
assert labels_np.tolist() == list(range(8))
