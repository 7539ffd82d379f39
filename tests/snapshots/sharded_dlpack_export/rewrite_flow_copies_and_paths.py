# expect: BufferError: __dlpack__ only supported for unsharded arrays
# requires: multi-device, torch
"""A sharded state tree copied (`copy.deepcopy`, `copy.copy`: each copy keeps its sharding) and
walked with its paths (`tree_leaves_with_path`, `tree.flatten_with_path`: (path, leaf) pairs),
then exported leaf by leaf (issue 54: none of these got a finding)."""
import copy

import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax.sharding import NamedSharding, PartitionSpec as P

sharding = NamedSharding(jax.sharding.Mesh(jax.devices(), ("data",)), P("data"))
state = {"w": jax.device_put(jnp.arange(8.0), sharding), "b": jax.device_put(jnp.ones(8), sharding)}

saved = copy.deepcopy(state)
weights = torch.from_dlpack(saved["w"])
bias = np.from_dlpack(copy.copy(state)["b"])

named = {}
for path, leaf in jax.tree_util.tree_leaves_with_path(state):
    named[jax.tree_util.keystr(path)] = torch.from_dlpack(leaf)

pairs, _ = jax.tree_util.tree_flatten_with_path(state)
first = np.from_dlpack(pairs[0][1])

assert float(weights.sum()) == 28.0 and float(bias.sum()) == 8.0
assert sorted(named) == ["['b']", "['w']"] and float(named["['w']"].sum()) == 28.0
assert float(first.sum()) == 8.0
