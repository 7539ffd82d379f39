"""pydlpack's `asdlpack` (retyped from a public torch<->JAX benchmark): its result has
`__dlpack__` and `__dlpack_device__`, so JAX's `from_dlpack` takes it on every JAX, whatever
the name says -- nothing to report."""
import jax
import jax.numpy as jnp
import torch
from dlpack import asdlpack


def convert_to_torch_and_back_dlpack(jax_array):
    torch_tensor = torch.from_dlpack(asdlpack(jax_array))
    return jnp.from_dlpack(asdlpack(torch_tensor)).block_until_ready()


def convert_to_jax_and_back_dlpack(torch_tensor):
    jax_array = jax.dlpack.from_dlpack(asdlpack(torch_tensor)).block_until_ready()
    return torch.from_dlpack(asdlpack(jax_array))
