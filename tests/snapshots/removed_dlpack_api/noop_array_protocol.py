import jax.dlpack
import jax.numpy as jnp
import numpy as np
import torch

x = jnp.arange(3.0)
t = torch.from_dlpack(x)
n = np.from_dlpack(x)
y = jax.dlpack.from_dlpack(t)
capsule = x.__dlpack__()
