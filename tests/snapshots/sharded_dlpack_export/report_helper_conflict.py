"""`ensure_single_device` already names something else: decline rather than shadow it."""
import functools

import jax
import jax.numpy as jnp
import torch

ensure_single_device = functools.partial(jax.device_put, device=jax.devices()[0])
doubled = jax.pmap(lambda a: a * 2)(jnp.ones((4, 2)))
t = torch.from_dlpack(doubled)


def local_name(values):
    ensure_single_device = values.block_until_ready
    return torch.from_dlpack(jax.pmap(jnp.negative)(values))
