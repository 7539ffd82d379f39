"""JAX arrays already gathered or checked before the export."""
import jax
import jax.numpy as jnp
import numpy as np
import torch


def gathered(value: jax.Array):
    value = jax.device_put(value, jax.devices()[0])
    return torch.from_dlpack(value)


def checked(value: jax.Array):
    if len(value.sharding.device_set) > 1:
        value = jax.device_put(value, jax.devices()[0])
    return torch.from_dlpack(value)


def replicated(value: jax.Array):
    if value.is_fully_replicated:
        return torch.from_dlpack(value.addressable_data(0))
    return torch.as_tensor(np.asarray(value))


def fallback(value: jax.Array):
    try:
        return torch.from_dlpack(value)
    except BufferError:
        return torch.as_tensor(np.asarray(value))


def narrowed_and_checked(value):
    if isinstance(value, jax.Array) and value.is_fully_addressable and len(value.devices()) == 1:
        return np.from_dlpack(value)
    return np.asarray(value)
