# execute: yes
"""Supported device types reached through the same config structures, and a torch tensor
asked for a device type JAX would refuse (torch's business, not this rule's)."""
from dataclasses import dataclass

import jax.numpy as jnp
import torch
from torch.utils.dlpack import DLDeviceType

TARGETS = {"cpu": (DLDeviceType.kDLCPU, 0)}


@dataclass
class ExportConfig:
    device: tuple = (DLDeviceType.kDLCPU, 0)


def features():
    return jnp.ones((2, 2))


tensors = {"weights": torch.ones(2)}
capsules = [
    features().__dlpack__(dl_device=TARGETS["cpu"]),
    features().__dlpack__(dl_device=ExportConfig().device),
]
for name, tensor in tensors.items():
    assert tensor.__dlpack_device__()[0] == DLDeviceType.kDLCPU
assert len(capsules) == 2
