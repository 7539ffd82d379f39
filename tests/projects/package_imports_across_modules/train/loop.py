import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

import interop

MESH = Mesh(np.array(jax.devices()[:4]), ("batch",))
ROWS = NamedSharding(MESH, PartitionSpec("batch"))


def run():
    batch = jax.device_put(jnp.arange(16.0, dtype=jnp.float32).reshape(8, 2), ROWS)
    expected = np.arange(16.0, dtype=np.float32).reshape(8, 2)

    tensor = interop.to_torch(batch)
    np.testing.assert_array_equal(tensor.numpy(), expected)

    host = interop.to_numpy(batch)
    np.testing.assert_array_equal(host, expected)

    # One device already: nothing to gather.
    single = jax.device_put(jnp.ones(3), jax.devices()[0])
    np.testing.assert_array_equal(interop.to_torch(single).numpy(), np.ones(3))
