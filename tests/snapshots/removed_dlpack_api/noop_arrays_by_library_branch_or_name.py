# option: target-jax-version=0.7.2
"""Values JAX's own interop tests pass to from_dlpack (jax tests/pytorch_interoperability_test.py,
tests/array_interoperability_test.py): arrays by every account but the value analysis's."""
import jax
import jax.numpy as jnp
import tensorflow as tf
import torch


def torch_to_jax(values, on_gpu, bf16):
    if bf16:
        x = torch.tensor(values.view(jnp.int16)).view(torch.bfloat16)
    else:
        x = torch.tensor(values)
    x = x.cuda() if on_gpu else x  # a tensor on either branch
    return jax.dlpack.from_dlpack(x)


def tf_to_jax(shape):
    x = tf.identity(tf.ones(shape))  # TensorFlow's own functions make tensors, not capsules
    return jax.dlpack.from_dlpack(x), jax.dlpack.from_dlpack(tf.ones((2, 3), tf.int64))


def numpy_to_jax(rng, shape, device):
    x_np = rng(shape)  # the name says which library
    return jnp.from_dlpack(x_np, device=device)
