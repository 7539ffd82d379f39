"""A torch capsule that JAX consumes and that is also handed elsewhere."""
import jax.dlpack
import torch
import torch.utils.dlpack

CACHE = []


def to_jax(t):
    capsule = torch.utils.dlpack.to_dlpack(t)
    CACHE.append(capsule)
    return jax.dlpack.from_dlpack(capsule)
