"""Torch tensors are never JAX arrays, however they reach the export."""
import jax
import torch
import torch.utils.dlpack


def from_torch(value: torch.Tensor):
    return torch.from_dlpack(value), value.__dlpack__()


def narrowed(value):
    if isinstance(value, torch.Tensor):
        return torch.utils.dlpack.from_dlpack(value)
    return None


t = torch.randn(3)
u = torch.from_dlpack(t * 2)
address = torch.ones(2).__dlpack__()
y = jax.numpy.from_dlpack(torch.arange(3))
