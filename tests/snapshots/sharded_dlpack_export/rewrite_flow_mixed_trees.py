# expect: BufferError: __dlpack__ only supported for unsharded arrays
# requires: multi-device
"""A consumer mapped over a tree or a list whose arrays are placed differently: one sharded leaf
among single-device ones raises, so every leaf (element) is gathered first."""
import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax.sharding import NamedSharding, PartitionSpec as P

sharding = NamedSharding(jax.sharding.Mesh(jax.devices(), ("data",)), P("data"))
params = {"w": jax.device_put(jnp.arange(8.0), sharding), "b": jnp.ones(2)}

tensors = jax.tree_util.tree_map(torch.from_dlpack, params)
pair = [params["b"], params["w"]]
arrays = list(map(np.from_dlpack, pair))

assert float(tensors["w"].sum()) == 28.0 and float(tensors["b"].sum()) == 2.0
assert [float(a.sum()) for a in arrays] == [2.0, 28.0]
