# expect: BufferError: __dlpack__ only supported for unsharded arrays
# requires: multi-device
"""A pytree of sharded parameters converted leaf by leaf: jax.tree.map with the consumer
itself, jax.tree_util.tree_map with a lambda, a loop over jax.tree.leaves, the builtin
map, and PyTorch's DLPack module bound through importlib."""
import importlib

import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax.sharding import NamedSharding, PartitionSpec as P

torch_dlpack = importlib.import_module("torch.utils.dlpack")

mesh = jax.sharding.Mesh(jax.devices(), ("data",))
data_sharding = NamedSharding(mesh, P("data"))

params = {
    "dense": {
        "kernel": jax.device_put(jnp.ones((8, 2)), data_sharding),
        "bias": jax.device_put(jnp.zeros(8), data_sharding),
    }
}

torch_params = jax.tree.map(torch.from_dlpack, params)
numpy_params = jax.tree_util.tree_map(lambda leaf: np.from_dlpack(leaf), params)
sizes = [torch_dlpack.from_dlpack(leaf).numel() for leaf in jax.tree.leaves(params)]
host_leaves = list(map(np.from_dlpack, jax.tree.leaves(params)))

assert torch_params["dense"]["kernel"].shape == (8, 2)
assert numpy_params["dense"]["bias"].shape == (8,) and sorted(sizes) == [8, 16]
assert sorted(leaf.size for leaf in host_leaves) == [8, 16]
