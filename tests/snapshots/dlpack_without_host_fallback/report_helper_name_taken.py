import jax.numpy as jnp
import torch
from mylib import _from_dlpack_or_host

x = jnp.arange(3.0)
total = torch.from_dlpack(x).sum()
