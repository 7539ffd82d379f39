"""Asks JAX for an OpenCL buffer, a device type JAX has no backend for (JAX003)."""
import jax.numpy as jnp
import torch.utils.dlpack
from torch.utils.dlpack import DLDeviceType


def to_consumer(x):
    capsule = x.__dlpack__(dl_device=(DLDeviceType.kDLOpenCL, 0), stream=None)
    return torch.utils.dlpack.from_dlpack(capsule)


if __name__ == "__main__":
    assert to_consumer(jnp.arange(3.0)).tolist() == [0.0, 1.0, 2.0]
