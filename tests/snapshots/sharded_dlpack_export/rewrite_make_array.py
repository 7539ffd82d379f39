# expect: BufferError: to_dlpack can only pack a dlpack tensor from an array on a singular device
# requires: multi-device
"""Arrays assembled from shards, and with_sharding_constraint results, into NumPy."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()), ("x",))
sharding = NamedSharding(mesh, P("x"))
data = np.arange(8.0)

from_callback = jax.make_array_from_callback(data.shape, sharding, lambda index: data[index])
assert np.array_equal(np.from_dlpack(from_callback), data)

pieces = [jax.device_put(data[2 * i : 2 * i + 2], d) for i, d in enumerate(mesh.devices.flat)]
assembled = jax.make_array_from_single_device_arrays(data.shape, sharding, pieces)
assert np.array_equal(np.from_dlpack(assembled), data)

constrained = jax.lax.with_sharding_constraint(jnp.asarray(data), sharding)
assert np.array_equal(np.from_dlpack(constrained), data)
