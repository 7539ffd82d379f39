"""Exports behind a sharding check, a platform check, or a BufferError fallback."""
import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.sharding.Mesh(jax.devices()[:4], ("x",))
x = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("x")))

if len(x.sharding.device_set) == 1:
    t = torch.from_dlpack(x)

if x.is_fully_replicated:
    u = torch.from_dlpack(x.addressable_data(0))

t = torch.from_dlpack(x) if x.is_fully_addressable and len(x.sharding.device_set) == 1 else None

try:
    t = torch.from_dlpack(x)
except BufferError:
    t = torch.as_tensor(np.asarray(x))  # host round-trip fallback

if jax.default_backend() == "gpu":
    address = x.unsafe_buffer_pointer()


def checked(a):
    b = jax.pmap(jnp.negative)(a)
    assert len(b.sharding.device_set) == 1, "gather first"
    return np.from_dlpack(b)


def early_exit(a):
    b = jax.pmap(jnp.negative)(a)
    if not b.is_fully_addressable:
        raise ValueError("needs one device")
    return np.from_dlpack(b)
