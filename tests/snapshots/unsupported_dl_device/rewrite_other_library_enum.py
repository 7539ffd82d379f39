# expect: BufferError: unsupported device type (DLDeviceType: 14)
# requires: jax<0.11.0
# option: target-jax-version=0.10.2
"""Another library's DLDeviceType enum, resolved by member name through its import."""
import enum
import sys
import types

import jax.numpy as jnp
import torch.utils.dlpack

# Stands in for a third-party package that ships its own DLPack enum.
otherlib = types.ModuleType("otherlib")
otherlib.DLDeviceType = enum.IntEnum("DLDeviceType", {"kDLCPU": 1, "kDLOneAPI": 14, "kDLMAIA": 17})
sys.modules["otherlib"] = otherlib

import otherlib as ol  # noqa: E402
from otherlib import DLDeviceType  # noqa: E402

x = jnp.linspace(0.0, 1.0, 5)
oneapi = torch.utils.dlpack.from_dlpack(x.__dlpack__(dl_device=(ol.DLDeviceType.kDLOneAPI, 0)))
maia = torch.utils.dlpack.from_dlpack(x.__dlpack__(dl_device=(DLDeviceType.kDLMAIA, 0)))
# JAX's own enum names only the types it exports to; other members fail before the call.
from jax._src.typing import DLDeviceType as JaxDLDeviceType  # noqa: E402

vulkan = torch.utils.dlpack.from_dlpack(x.__dlpack__(dl_device=(JaxDLDeviceType.kDLVulkan, 0)))
assert torch.allclose(oneapi, torch.linspace(0.0, 1.0, 5))
assert torch.equal(vulkan, oneapi)
assert torch.equal(oneapi, maia)
