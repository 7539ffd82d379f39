# expect: AttributeError: to_dlpack
# fails-on: jax>=0.7.0
"""JAX -> PyTorch through the removed capsule API."""
import jax
import jax.dlpack
import jax.numpy as jnp
import torch
import torch.utils.dlpack


def to_torch(x):
    # The consumer takes the capsule.
    return torch.utils.dlpack.from_dlpack(jax.dlpack.to_dlpack(x))


x = jnp.arange(6.0).reshape(2, 3)
t = to_torch(x)
assert torch.equal(t, torch.arange(6.0).reshape(2, 3))
assert torch.from_dlpack(jax.dlpack.to_dlpack(x + 1)).sum().item() == 21.0
