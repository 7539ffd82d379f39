# expect: BufferError: __dlpack__ only supported for unsharded arrays
# requires: multi-device
"""Transforms spelled through from-imports and module aliases, including the legacy ones."""
import jax.experimental.pjit as pj
import jax.numpy as jnp
import numpy as np
import torch.utils.dlpack as tud
from jax import jit, pmap
from jax.experimental.shard_map import shard_map as legacy_shard_map
from jax.sharding import Mesh, NamedSharding, PartitionSpec
from torch.utils.dlpack import from_dlpack

import jax

mesh = Mesh(np.array(jax.devices()), ("x",))
rows = NamedSharding(mesh, PartitionSpec("x"))

mapped = pmap(jnp.sqrt)(jnp.full((4, 2), 4.0))
assert from_dlpack(mapped).sum().item() == 16.0

legacy = legacy_shard_map(lambda b: b + 1, mesh, in_specs=PartitionSpec("x"), out_specs=PartitionSpec("x"))
assert tud.from_dlpack(legacy(jnp.zeros(8))).sum().item() == 8.0

placed = jit(jnp.cos, out_shardings=rows)(jnp.zeros(8))
assert from_dlpack(placed).sum().item() == 8.0

partitioned = pj.pjit(jnp.sin, in_shardings=rows, out_shardings=rows)(jnp.zeros(8))
assert tud.from_dlpack(partitioned).sum().item() == 0.0
