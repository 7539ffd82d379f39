# expect: BufferError: unsupported device type (DLDeviceType: 4)
"""Device types written as bare ints, including one that is no DLPack type at all."""
import jax.numpy as jnp
import numpy as np
import torch.utils.dlpack

x = jnp.arange(4, dtype=jnp.int32)
opencl = torch.utils.dlpack.from_dlpack(x.__dlpack__(dl_device=(4, 0)))
vulkan = torch.utils.dlpack.from_dlpack(x.__dlpack__(
    copy=None,
    dl_device=(7, 0),
))
negative = torch.utils.dlpack.from_dlpack(x.__dlpack__(dl_device=(-1, 0)))
for t in (opencl, vulkan, negative):
    assert t.tolist() == [0, 1, 2, 3]
    assert t.dtype == torch.int32
