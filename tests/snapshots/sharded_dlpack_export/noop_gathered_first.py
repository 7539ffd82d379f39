"""Values gathered before the export, in each of the seed's spellings."""
import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax.sharding import NamedSharding, PartitionSpec as P


def ensure_single_device(x, dev=None):
    dev = dev or jax.devices()[0]
    if len(x.sharding.device_set) > 1:
        return jax.device_put(x, dev)
    return x


mesh = jax.sharding.Mesh(jax.devices()[:4], ("x",))
x = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("x")))

t = torch.from_dlpack(ensure_single_device(x))
host = np.from_dlpack(jax.device_get(x))
first = torch.from_dlpack(x.addressable_data(0))

y = jax.pmap(jnp.negative)(jnp.ones((4, 2)))
y = jax.device_put(y, jax.devices()[0])
u = torch.from_dlpack(y)

z = jax.device_put(x, jax.devices()[0])
v = torch.from_dlpack(z)
w = ensure_single_device(x)
address = w.unsafe_buffer_pointer()
