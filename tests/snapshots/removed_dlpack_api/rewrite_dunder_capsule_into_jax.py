# expect: TypeError: must have __dlpack__
# fails-on: jax>=0.7.2
"""Capsules made with __dlpack__() and handed to JAX's from_dlpack."""
import jax.dlpack
import jax.numpy as jnp
import numpy as np
import torch


def weights_to_jax(weights: torch.Tensor):
    return jax.dlpack.from_dlpack(weights.__dlpack__())


def host_to_jax():
    buffer = np.arange(6.0).reshape(2, 3)
    return jnp.from_dlpack(buffer.__dlpack__())


w = weights_to_jax(torch.arange(6.0).reshape(2, 3).T)
assert w.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
assert host_to_jax().sum() == 15.0
