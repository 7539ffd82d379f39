# expect: BufferError: contains an unsupported device type (DLDeviceType: 4)
"""The seed: a consumer asks JAX for an OpenCL buffer, spelled with torch's enum."""
import jax.numpy as jnp
import torch
import torch.utils.dlpack
from torch.utils.dlpack import DLDeviceType

x = jnp.arange(6.0).reshape(2, 3)
capsule = x.__dlpack__(dl_device=(DLDeviceType.kDLOpenCL, 0), stream=None)
t = torch.utils.dlpack.from_dlpack(capsule)
assert torch.equal(t, torch.arange(6.0).reshape(2, 3))

# The fully qualified spelling, and an unsupported type inside a larger expression.
metal = torch.utils.dlpack.from_dlpack(x.__dlpack__(dl_device=(torch.utils.dlpack.DLDeviceType.kDLMetal, 0)))
assert metal.sum().item() == 15.0
