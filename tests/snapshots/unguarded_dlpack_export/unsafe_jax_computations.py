# expect: BufferError: to_dlpack can only pack a dlpack tensor from an array on a singular device
# requires: multi-device
"""Results of jnp/lax calls and of jitted functions on arrays the caller supplies."""
import jax
import jax.numpy as jnp
import numpy as np
import torch.utils.dlpack
from jax.sharding import NamedSharding, PartitionSpec as P


@jax.jit
def normalize(v):
    return v / jnp.linalg.norm(v)


def summary(values):
    scaled = jnp.tanh(jnp.asarray(values))
    return np.from_dlpack(scaled)


def unit(values):
    return np.from_dlpack(normalize(values))


def capsule(values):
    return jax.lax.neg(values).__dlpack__()


mesh = jax.sharding.Mesh(jax.devices()[:4], ("x",))
x = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("x")))
assert np.allclose(summary(x), np.tanh(np.arange(8.0)))
assert np.allclose(unit(x), np.arange(8.0) / np.linalg.norm(np.arange(8.0)))
assert torch.equal(torch.utils.dlpack.from_dlpack(capsule(x)), -torch.arange(8.0))
