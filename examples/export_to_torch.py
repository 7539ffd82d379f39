"""Hands JAX results to PyTorch the way code written for JAX 0.4 did."""
import jax
import jax.dlpack
import jax.numpy as jnp
import torch
import torch.utils.dlpack


def to_torch(x: jax.Array) -> torch.Tensor:
    return torch.utils.dlpack.from_dlpack(jax.dlpack.to_dlpack(x))


def from_torch(t: torch.Tensor) -> jax.Array:
    return jax.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(t))


if __name__ == "__main__":
    x = jnp.arange(6.0).reshape(2, 3)
    assert torch.equal(to_torch(x), torch.arange(6.0).reshape(2, 3))
    assert jnp.array_equal(from_torch(torch.ones(3)), jnp.ones(3))
