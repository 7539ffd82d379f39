"""Capsules made in a dict comprehension and read back out of it on their way into JAX: the
file shows they are capsules (and who made them), but no fix follows a capsule through a
dict comprehension, so the consumer is reported with the maker named -- not as a capsule
of unknown origin."""
import jax
import jax.dlpack
import torch
import torch.utils.dlpack


def batch_to_jax(batch):
    capsules = {k: torch.utils.dlpack.to_dlpack(v) for k, v in batch.items()}
    return {k: jax.dlpack.from_dlpack(c) for k, c in capsules.items()}
