# expect: BufferError: __dlpack__ only supported for unsharded arrays
# requires: multi-device
"""Every spelling resolves by qualified name: aliases, from-imports, submodule aliases."""
import jax
import jax.numpy as jnp
import jax.sharding as jsh
import numpy
from jax import device_put
from jax import numpy as jnumpy
from numpy import from_dlpack as numpy_from_dlpack
from torch import from_dlpack
from torch import from_dlpack as to_torch
from torch.utils import dlpack as tdl

mesh = jsh.Mesh(jax.devices()[:4], ("x",))
spread = device_put(jnp.arange(8.0), jsh.NamedSharding(mesh, jsh.PartitionSpec("x")))

assert from_dlpack(spread).sum().item() == 28.0
assert tdl.from_dlpack(spread).sum().item() == 28.0
assert numpy_from_dlpack(spread).sum() == 28.0
assert numpy.from_dlpack(spread).sum() == 28.0
assert jnumpy.from_dlpack(spread).sum() == 28.0
assert to_torch(spread).sum().item() == 28.0
assert to_torch(
    spread
).sum().item() == 28.0
