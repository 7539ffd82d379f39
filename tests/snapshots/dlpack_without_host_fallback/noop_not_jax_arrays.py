# option: target-platforms=cpu,gpu,metal
"""Exports whose argument is known not to be a JAX array, or to have left JAX."""
import jax
import jax.numpy as jnp
import numpy as np
import torch


def from_numpy():
    host = np.arange(3)
    return torch.from_dlpack(host), np.from_dlpack(torch.arange(3))


def fetched(x: jax.Array):
    return torch.from_dlpack(jax.device_get(x))


def local_torch(x: jax.Array):
    class torch:
        @staticmethod
        def from_dlpack(value):
            return value

    return torch.from_dlpack(x)
