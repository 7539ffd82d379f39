# option: target-jax-version=0.7.2
"""TensorFlow -> JAX through a TF capsule: JAX >= 0.7.2 refuses the capsule, and many TensorFlow
releases' tensors have no `__dlpack__` to pass instead (tensorflow#61769), so no rewrite."""
import jax
import jax.numpy as jnp
import tensorflow as tf


def tf2jax(x):
    x = tf.experimental.dlpack.to_dlpack(x)
    x = jax.dlpack.from_dlpack(x)
    return x


def tf_to_jax(x: tf.Tensor) -> jnp.ndarray:
    dlpack = tf.experimental.dlpack.to_dlpack(x)
    return jax.dlpack.from_dlpack(dlpack)


def inline(t):
    return jnp.from_dlpack(tf.experimental.dlpack.to_dlpack(t))
