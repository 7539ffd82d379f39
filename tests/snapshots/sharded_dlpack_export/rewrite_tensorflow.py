# expect: BufferError: __dlpack__ only supported for unsharded arrays
# requires: tensorflow, multi-device
"""tf.experimental.dlpack.from_dlpack of a sharded array."""
import jax
import jax.numpy as jnp
import tensorflow as tf
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.sharding.Mesh(jax.devices()[:4], ("x",))
x = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("x")))
tensor = tf.experimental.dlpack.from_dlpack(x.__dlpack__())
assert float(tf.reduce_sum(tensor)) == 28.0
