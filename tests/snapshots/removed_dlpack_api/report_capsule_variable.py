import jax.dlpack
import torch
import torch.utils.dlpack

t = torch.ones(3)
capsule = torch.utils.dlpack.to_dlpack(t)
y = jax.dlpack.from_dlpack(capsule)
