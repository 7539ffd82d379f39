# expect: BufferError: __dlpack__ only supported for unsharded arrays
# requires: multi-device, torch
"""A notebook's display line (`labels.sharding` alone on its line) and a `print` of the
sharding look at the devices but decide nothing: the export after them still raises, and is
fixed (issue 54: they counted as a guard and silenced the rule)."""
import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax.sharding import NamedSharding, PartitionSpec as P

sharding = NamedSharding(jax.sharding.Mesh(jax.devices(), ("data",)), P("data"))
labels = jax.device_put(jnp.arange(8.0), sharding)
labels.sharding
tensor = torch.from_dlpack(labels)

weights = jax.device_put(jnp.ones(8), sharding)
print(weights.sharding)
host = np.from_dlpack(weights)

assert float(tensor.sum()) == 28.0 and float(host.sum()) == 8.0
