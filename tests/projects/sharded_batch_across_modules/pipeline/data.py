import functools

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

MESH = Mesh(np.array(jax.devices()[:4]), ("batch",))
# A placement alias the other modules call as if it were a function of theirs.
put_rows = functools.partial(jax.device_put, device=NamedSharding(MESH, PartitionSpec("batch")))


def make_batch(n):
    values = np.arange(n * 4, dtype=np.float32).reshape(n, 4)
    return jax.device_put(values, NamedSharding(MESH, PartitionSpec("batch")))


def place(values, sharding):
    # Placed as the caller says: only the call knows the sharding.
    return jax.device_put(values, sharding)
