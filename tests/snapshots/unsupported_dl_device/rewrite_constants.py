# expect: BufferError: unsupported device type (DLDeviceType: 15)
"""Device types held by constants: module-level, function-local, a whole device tuple."""
import enum

import jax.numpy as jnp
import torch.utils.dlpack
from torch.utils.dlpack import DLDeviceType

WEBGPU = DLDeviceType.kDLWebGPU
HEXAGON = 16
VULKAN_DEVICE = (DLDeviceType.kDLVulkan, 0)


class LocalDeviceType(enum.IntEnum):
    kDLCPU = 1
    kDLExtDev = 12


def export(x):
    vpi = 9
    capsules = [
        x.__dlpack__(dl_device=(WEBGPU, 0)),
        x.__dlpack__(dl_device=(HEXAGON, 0)),
        x.__dlpack__(dl_device=VULKAN_DEVICE),
        x.__dlpack__(dl_device=(vpi, 0)),
        x.__dlpack__(dl_device=(LocalDeviceType.kDLExtDev, 0)),
    ]
    return [torch.utils.dlpack.from_dlpack(capsule) for capsule in capsules]


for t in export(jnp.ones((2, 2))):
    assert torch.equal(t, torch.ones(2, 2))
