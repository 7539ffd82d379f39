"""A TPU project's hand-offs between JAX, PyTorch and NumPy: right on a CPU or GPU, broken on the
TPU the project declares (`jax[tpu]`): a TPU's memory has no DLPack export, and a DLPack import of
a torch CPU tensor lands on the host's CPU device."""
import jax
import jax.dlpack
import jax.numpy as jnp
import numpy as np
import torch


def to_torch(x: jax.Array) -> torch.Tensor:
    return torch.from_dlpack(x)


def to_numpy(x: jax.Array) -> np.ndarray:
    return np.from_dlpack(x)


def from_torch(t: torch.Tensor) -> jax.Array:
    return jax.dlpack.from_dlpack(t)


if __name__ == "__main__":
    x = jnp.arange(6.0)
    assert torch.equal(to_torch(x), torch.arange(6.0))
    assert to_numpy(x).sum() == 15.0
    step = jax.jit(lambda w, b: w * b)
    assert step(jax.device_put(jnp.ones(3), jax.devices()[0]), from_torch(torch.arange(3.0))).tolist() == [0.0, 1.0, 2.0]
