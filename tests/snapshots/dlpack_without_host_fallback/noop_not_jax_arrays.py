# option: target-platforms=cpu,gpu,metal
"""Exports whose argument is not known to be a JAX array."""
import jax
import jax.numpy as jnp
import numpy as np
import torch


def untyped(x):
    return torch.from_dlpack(x)


def from_numpy():
    host = np.arange(3)
    return torch.from_dlpack(host), np.from_dlpack(torch.arange(3))


def reassigned(flag):
    y = jnp.ones(3)
    if flag:
        y = np.ones(3)
    return torch.from_dlpack(y)


def fetched(x: jax.Array):
    return torch.from_dlpack(jax.device_get(x))


def loop(arrays):
    return [torch.from_dlpack(a) for a in arrays]


def local_torch(x: jax.Array):
    class torch:
        @staticmethod
        def from_dlpack(value):
            return value

    return torch.from_dlpack(x)
