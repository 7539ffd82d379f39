# expect: BufferError: unsupported device type (DLDeviceType: 4)
"""A requested device type kept in a config dict and a dataclass, and the JAX array reached
through a helper: the unsupported `dl_device` is dropped."""
from dataclasses import dataclass

import jax.numpy as jnp
import torch.utils.dlpack
from torch.utils.dlpack import DLDeviceType

TARGETS = {"opencl": (DLDeviceType.kDLOpenCL, 0), "cpu": (DLDeviceType.kDLCPU, 0)}


@dataclass
class ExportConfig:
    device: tuple = (DLDeviceType.kDLVulkan, 0)


def features():
    return jnp.ones((2, 2))


config = ExportConfig()
capsules = [
    features().__dlpack__(dl_device=TARGETS["opencl"]),
    features().__dlpack__(dl_device=config.device),
]
for capsule in capsules:
    assert torch.equal(torch.utils.dlpack.from_dlpack(capsule), torch.ones(2, 2))
