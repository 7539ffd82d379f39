import jax
import jax.numpy as jnp
from jax._src.typing import DLDeviceType as JaxDLDeviceType
from torch.utils.dlpack import DLDeviceType

CPU = DLDeviceType.kDLCPU
x = jnp.arange(3.0)
a = x.__dlpack__(dl_device=(DLDeviceType.kDLCPU, 0))
b = x.__dlpack__(dl_device=(JaxDLDeviceType.kDLCUDA, 0))
c = x.__dlpack__(dl_device=(2, 0))
d = x.__dlpack__(dl_device=(DLDeviceType.kDLCUDAHost, 0))
e = x.__dlpack__(dl_device=(10, 0))
f = x.__dlpack__(dl_device=(CPU, 0))
# A zero type is skipped by to_dlpack (`if dl_device_type:`), not rejected.
g = x.__dlpack__(dl_device=(0, 0))
h = x.__dlpack__(dl_device=None)
i = x.__dlpack__(dl_device=x.__dlpack_device__())
