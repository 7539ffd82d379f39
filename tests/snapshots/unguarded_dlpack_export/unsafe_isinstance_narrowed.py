# expect: BufferError: __dlpack__ only supported for unsharded arrays
# requires: multi-device
"""Branches narrowed by isinstance(x, jax.Array), and early exits unless it holds."""
import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax.sharding import NamedSharding, PartitionSpec as P


def as_torch(value):
    if isinstance(value, jax.Array):
        return torch.from_dlpack(value)
    return torch.as_tensor(value)


def as_numpy(value):
    if not isinstance(value, jax.Array):
        return np.asarray(value)
    return np.from_dlpack(value)


def pointer(value):
    return value.unsafe_buffer_pointer() if isinstance(value, jnp.ndarray) else None


mesh = jax.sharding.Mesh(jax.devices()[:4], ("x",))
x = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("x")))
assert torch.equal(as_torch(x), torch.arange(8.0))
assert torch.equal(as_torch([1.0, 2.0]), torch.tensor([1.0, 2.0]))
assert np.array_equal(as_numpy(x), np.arange(8.0))
