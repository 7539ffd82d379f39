#!/usr/bin/env python
# expect: BufferError: __dlpack__ only supported for unsharded arrays
# requires: multi-device
"""The helper is defined once, after the imports, however many exports need it."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import torch

try:
    import cupy
except ImportError:
    cupy = None
SHARDING = jax.sharding.NamedSharding(jax.sharding.Mesh(jax.devices()[:4], ("x",)), jax.sharding.PartitionSpec("x"))


def spread(values):
    return jax.device_put(jnp.asarray(values), SHARDING)


def to_torch(values):
    return torch.from_dlpack(spread(values))


def to_numpy(values):
    sharded = spread(values)
    return np.from_dlpack(sharded)


assert torch.equal(to_torch([1.0, 2.0, 3.0, 4.0]), torch.tensor([1.0, 2.0, 3.0, 4.0]))
assert np.array_equal(to_numpy([1, 2, 3, 4]), np.array([1, 2, 3, 4]))
