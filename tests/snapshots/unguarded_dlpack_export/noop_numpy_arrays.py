"""NumPy arrays, host copies and mixed isinstance checks are not JAX arrays."""
import jax
import jax.numpy as jnp
import numpy as np
import numpy.typing as npt
import torch
from jax.typing import ArrayLike


def from_numpy(value: np.ndarray, other: npt.NDArray, either: ArrayLike):
    return torch.from_dlpack(value), torch.from_dlpack(other), torch.from_dlpack(either)


def host(value: jax.Array):
    on_host = jax.device_get(value)
    return torch.from_dlpack(on_host), torch.from_dlpack(np.asarray(value))


def mixed(value):
    if isinstance(value, (jax.Array, np.ndarray)):
        return torch.from_dlpack(value)
    return None


a = np.arange(3.0)
b = torch.from_dlpack(a)
c = np.from_dlpack(np.ones(2))
d = jnp.arange(3.0)
e = torch.from_dlpack(d)
