import jax
import jax.numpy as jnp
import numpy as np
import torch

from setup.config import Config, staged

cfg = Config()
batch = jax.device_put(jnp.arange(8.0), cfg.mesh.batch_sharding())
tensor = torch.from_dlpack(batch)

with staged(jnp.arange(8.0)) as (rows, mask):
    host = np.from_dlpack(rows)
    ones = np.from_dlpack(mask)

assert float(tensor.sum()) == float(host.sum()) == 28.0 and float(ones.sum()) == 8.0
print("ok")
