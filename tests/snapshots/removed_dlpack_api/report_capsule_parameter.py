"""Capsules that arrive from outside the function: reported, with what to do."""
import jax.dlpack
import jax.numpy as jnp
import torch
import torch.utils.dlpack


def capsule_to_jax(capsule):
    return jax.dlpack.from_dlpack(capsule)


def capsules_to_jax(*dlpack_tensors):
    return [jnp.from_dlpack(t) for t in dlpack_tensors]


def convert(value):
    return jax.dlpack.from_dlpack(value)


def from_batch(batch):
    return jax.dlpack.from_dlpack(batch["dlpack"])


y = convert(torch.utils.dlpack.to_dlpack(torch.ones(2)))
