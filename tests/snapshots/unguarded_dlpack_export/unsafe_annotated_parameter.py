# expect: BufferError: __dlpack__ only supported for unsharded arrays
# requires: multi-device
"""Library boundaries typed as JAX arrays, in every annotation spelling."""
from typing import Optional

import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax import Array
from jax.sharding import NamedSharding, PartitionSpec as P


def jax_to_torch(value: jax.Array) -> torch.Tensor:
    return torch.from_dlpack(value)


def jnp_to_numpy(value: jnp.ndarray) -> np.ndarray:
    return np.from_dlpack(value)


def quoted(value: "jax.Array"):
    return torch.utils.dlpack.from_dlpack(value)


def optional(value: Optional[Array] = None, *, other: Array | None = None):
    return torch.from_dlpack(value), value.__dlpack__(), np.from_dlpack(other)


mesh = jax.sharding.Mesh(jax.devices()[:4], ("x",))
x = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("x")))
assert torch.equal(jax_to_torch(x), torch.arange(8.0))
assert np.array_equal(jnp_to_numpy(x), np.arange(8.0))
assert quoted(x).sum().item() == 28.0
tensor, capsule, array = optional(x, other=x)
assert torch.equal(tensor, torch.utils.dlpack.from_dlpack(capsule)) and array.sum() == 28.0
# Single-device arrays pass through unchanged.
assert torch.equal(jax_to_torch(jnp.ones(3)), torch.ones(3))
