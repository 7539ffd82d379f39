# option: target-platforms=cpu,gpu,metal
import jax.numpy as jnp
import torch
from mylib import ensure_exportable  # something else of that name

x = jnp.arange(3.0)
total = torch.from_dlpack(x).sum()
