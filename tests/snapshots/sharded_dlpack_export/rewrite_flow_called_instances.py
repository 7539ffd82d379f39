# expect: BufferError: __dlpack__ only supported for unsharded arrays
# requires: multi-device
"""An instance of the file's class called with a sharded array, whose `__call__` exports its
argument: called through the name it is bound to (`bridge(batch)`) and made and called at once
(`ToTorch()(batch)`). The export in `__call__` gathers its parameter."""
import jax
import numpy as np
import torch
from jax.sharding import Mesh, NamedSharding, PartitionSpec


class ToTorch:
    def __call__(self, x):
        return torch.from_dlpack(x)


mesh = Mesh(np.array(jax.devices()[:4]), ("batch",))
batch = jax.device_put(np.arange(8.0, dtype=np.float32), NamedSharding(mesh, PartitionSpec("batch")))
bridge = ToTorch()
first = bridge(batch)
second = ToTorch()(batch)
assert first.tolist() == second.tolist() == list(range(8))
