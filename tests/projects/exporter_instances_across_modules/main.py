import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from bridge.torch_bridge import ToTorch

mesh = Mesh(np.array(jax.devices()[:4]), ("batch",))
batch = jax.device_put(np.arange(8.0, dtype=np.float32), NamedSharding(mesh, PartitionSpec("batch")))

to_torch = ToTorch()
first = to_torch(batch)
second = ToTorch()(batch)
assert first.tolist() == second.tolist() == list(range(8))
