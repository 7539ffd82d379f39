"""Arrays the file places itself: on one device (fine) or sharded (JAX002's finding)."""
import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax.sharding import NamedSharding, PartitionSpec as P

single = jnp.arange(8.0)
t = torch.from_dlpack(single)
zeros = np.from_dlpack(jnp.zeros((2, 2)))
literal = torch.from_dlpack(jnp.array([1.0, 2.0]))
placed = torch.from_dlpack(jax.device_put(np.ones(3), jax.devices()[0]))

mesh = jax.sharding.Mesh(jax.devices()[:4], ("x",))
sharded = jax.device_put(single, NamedSharding(mesh, P("x")))
u = torch.from_dlpack(sharded)


@jax.jit
def double(v):
    return v * 2


doubled = torch.from_dlpack(double(single))
halved = np.from_dlpack(jax.jit(lambda v: v / 2)(jnp.ones(4)))
