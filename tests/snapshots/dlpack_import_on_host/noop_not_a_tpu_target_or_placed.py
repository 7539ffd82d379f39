# execute: yes
"""Nothing for a CPU/GPU target (the default, here), and imports already placed or of JAX arrays
are left alone on any target."""
import jax
import jax.dlpack
import jax.numpy as jnp
import torch

x = jax.dlpack.from_dlpack(torch.arange(3.0))
placed = jax.device_put(jax.dlpack.from_dlpack(torch.ones(2)), jax.devices()[0])
same = jnp.from_dlpack(jnp.arange(2.0))
assert x.tolist() == [0.0, 1.0, 2.0] and placed.tolist() == [1.0, 1.0] and same.tolist() == [0.0, 1.0]
