import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from interop import to_torch
from interop.convert import Exporter
from train.logging import summarize

MESH = Mesh(np.array(jax.devices()[:4]), ("batch",))
ROWS = NamedSharding(MESH, PartitionSpec("batch"))


def run():
    batch = jax.device_put(jnp.arange(16.0, dtype=jnp.float32).reshape(8, 2), ROWS)
    expected = np.arange(16.0, dtype=np.float32).reshape(8, 2)

    tensor = to_torch(batch)
    np.testing.assert_array_equal(tensor.numpy(), expected)

    assert summarize(batch) == float(expected.sum())

    exported = Exporter(torch.float64).export(batch)
    assert exported.dtype == torch.float64
    np.testing.assert_array_equal(exported.numpy(), expected)

    # One device already: nothing to gather.
    single = jax.device_put(jnp.ones(3), jax.devices()[0])
    np.testing.assert_array_equal(to_torch(single).numpy(), np.ones(3))
