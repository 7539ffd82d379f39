# ruff: noqa -- real code, kept in its own style
# source: github.com/subho406/pytorch2jax pytorch2jax.py
# commit: 6c5fa5d1e713337d6c09600fe1c9594955c58e9c
# Reproduction, not a copy: the bridging functions re-typed with the same calls, data flow and
# import spellings (this workplace keeps fetched code out of commits); imports reduced to jax/torch
# (the file also imports functorch and flax for its model converters, which only call these two).
import jax.numpy as jnp
import torch
import jax
from torch.utils.dlpack import from_dlpack as pyt_from_dlpack
from torch.utils.dlpack import to_dlpack as pyt_to_dlpack
from jax.dlpack import to_dlpack as jax_to_dlpack
from jax.dlpack import from_dlpack as jax_from_dlpack


def convert_to_pyt(x):
    # a JAX array goes through a capsule to torch; anything else passes unchanged
    if isinstance(x,jnp.ndarray):
        x=jax_to_dlpack(x)
        x=pyt_from_dlpack(x)
    return x

def convert_to_jax(x):
    if isinstance(x,torch.Tensor):
        x=pyt_to_dlpack(x)
        x=jax_from_dlpack(x)
    return x
