import jax.numpy as jnp
from torch.utils.dlpack import DLDeviceType

OPENCL = DLDeviceType.kDLOpenCL


def export(x):
    # The local name shadows the module constant and holds a supported type.
    OPENCL = DLDeviceType.kDLCPU
    return x.__dlpack__(dl_device=(OPENCL, 0))


def local_enum():
    class DLDeviceType:
        kDLOpenCL = 1

    return jnp.ones(2).__dlpack__(dl_device=(DLDeviceType.kDLOpenCL, 0))
