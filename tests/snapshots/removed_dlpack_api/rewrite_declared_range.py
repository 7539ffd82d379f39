# expect: AttributeError: to_dlpack
# fails-on: jax>=0.7.0
# option: target-jax-version=>=0.4.30
"""A library that declares `jax>=0.4.30`: `to_dlpack` works on the oldest releases it allows and is
gone from 0.7 on, so it is reported, and the fix must run on 0.4.30 as well as on the newest JAX."""
import jax.dlpack
import jax.numpy as jnp
import numpy as np
import torch
import torch.utils.dlpack


def export(x):
    return torch.utils.dlpack.from_dlpack(jax.dlpack.to_dlpack(x))


def export_kept(x):
    capsule = jax.dlpack.to_dlpack(x)
    return torch.utils.dlpack.from_dlpack(capsule), capsule


x = jnp.arange(6.0).reshape(2, 3)
assert torch.equal(export(x), torch.arange(6.0).reshape(2, 3))
tensor, capsule = export_kept(x + 1)
assert type(capsule).__name__ == "PyCapsule"
np.testing.assert_array_equal(tensor.numpy(), np.arange(1.0, 7.0).reshape(2, 3))
