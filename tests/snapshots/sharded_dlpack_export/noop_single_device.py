"""Arrays on one device: plain jnp values, jit without shardings, device_put to a device."""
import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax.sharding import SingleDeviceSharding

a = jnp.arange(8.0)
t = torch.from_dlpack(a)
b = jax.jit(lambda v: v * 2)(a)
u = np.from_dlpack(b)
c = jax.device_put(a, jax.devices()[1])
capsule = c.__dlpack__()
d = jax.device_put(a, SingleDeviceSharding(jax.devices()[2]))
address = d.unsafe_buffer_pointer()


@jax.jit
def scale(v):
    return v * 3


e = torch.from_dlpack(scale(a))
f = torch.from_dlpack(torch.ones(3))
g = np.from_dlpack(np.ones(3))

on_one = jax.jit(lambda v: v + 1, out_shardings=SingleDeviceSharding(jax.devices()[0]))
h = torch.from_dlpack(on_one(a))
kept = jax.jit(lambda v: v - 1, out_shardings=None)
k = np.from_dlpack(kept(a))
