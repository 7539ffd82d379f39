# execute: yes
"""One `Device` on every branch is one device; a dtype argument carries no placement."""
import jax
import jax.numpy as jnp
import numpy as np
import torch


def to_torch(values, platform=None):
    if platform is None:
        device = jax.devices()[0]
    else:
        if platform not in ("cpu", "gpu"):
            raise ValueError(platform)
        device = jax.devices(platform)[0]
    x = jax.device_put(values, device)
    return torch.from_dlpack(x)


def converted_pointer(dtype):
    x = jax.device_put(np.zeros(5, np.float32))
    y = jax.lax.convert_element_type(x, dtype)
    return y.unsafe_buffer_pointer()


assert to_torch(np.arange(3.0)).tolist() == [0.0, 1.0, 2.0]
assert converted_pointer(jnp.int32) != 0
