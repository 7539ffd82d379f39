# expect: BufferError: unsupported device type (DLDeviceType: 4)
# requires: multi-device
"""The device type is a parameter: fall back to the array's own device on BufferError."""
import jax
import jax.numpy as jnp
import torch.utils.dlpack
from jax.sharding import Mesh, NamedSharding, PartitionSpec
from torch.utils.dlpack import DLDeviceType


def export(x, dl_device):
    capsule = x.__dlpack__(dl_device=dl_device)
    return torch.utils.dlpack.from_dlpack(capsule)


def export_inline(x, kind):
    return torch.utils.dlpack.from_dlpack(x.__dlpack__(dl_device=(kind, 0), stream=None)) * 2


x = jnp.arange(3.0)
assert export(x, (DLDeviceType.kDLCPU, 0)).tolist() == [0.0, 1.0, 2.0]
assert export(x, (DLDeviceType.kDLOpenCL, 0)).tolist() == [0.0, 1.0, 2.0]
assert export_inline(x, DLDeviceType.kDLVulkan).tolist() == [0.0, 2.0, 4.0]

# BufferErrors that dl_device does not cause still surface: the retry raises them again.
mesh = Mesh(jax.devices(), ("d",))
sharded = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, PartitionSpec("d")))
try:
    result = export(sharded, (DLDeviceType.kDLOpenCL, 0))
except BufferError as error:
    assert "singular device" in str(error), error
else:
    # Only a fix for a target with a platform that exports nothing (a TPU) copies to the host
    # (JAX004's helper), and that answers the multi-device error too.
    assert jax.default_backend() == "tpu", "a sharded array cannot be exported"
    assert result.tolist() == list(range(8))
