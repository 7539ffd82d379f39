"""TensorFlow's `from_dlpack` takes a capsule only ("A PyCapsule named as dltensor"): given the
sharded array itself it raises TypeError, not the sharded export's BufferError, and gathering the
array first would not make it work. The export is the capsule's making (rewrite_tensorflow.py)."""
import jax
import jax.numpy as jnp
import tensorflow as tf
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.sharding.Mesh(jax.devices()[:4], ("x",))
x = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("x")))
tensor = tf.experimental.dlpack.from_dlpack(x)
