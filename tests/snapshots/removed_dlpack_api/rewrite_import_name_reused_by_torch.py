# expect: ImportError: to_dlpack
# fails-on: jax>=0.7.0
"""A function imports torch's `to_dlpack` under the same name: that read is torch's, not the
module's import of JAX's, so once the JAX call is migrated the failing import goes too."""
import jax.numpy as jnp
import torch
from jax.dlpack import from_dlpack, to_dlpack


def jax_to_torch(x):
    return torch.utils.dlpack.from_dlpack(to_dlpack(x))


def torch_capsule(t):
    from torch.utils.dlpack import to_dlpack

    return to_dlpack(t)


moved = jax_to_torch(jnp.arange(3.0))
assert moved.tolist() == [0.0, 1.0, 2.0]
assert from_dlpack(moved).tolist() == [0.0, 1.0, 2.0]
assert torch.utils.dlpack.from_dlpack(torch_capsule(torch.ones(2))).tolist() == [1.0, 1.0]
