# execute: yes
# requires: multi-device, torch
"""A helper whose parameter is annotated `jax.Array` (JAX006's shape: sharding unknown), every
call of which sits in a `try` whose handler catches the export's BufferError and falls back to
the host: a sharded array is handled where it is passed. Nothing is reported (issue 54)."""
import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax.sharding import NamedSharding, PartitionSpec as P


def to_torch(x: jax.Array) -> torch.Tensor:
    return torch.from_dlpack(x)


def export(x: jax.Array) -> torch.Tensor:
    try:
        return to_torch(x)
    except BufferError:
        return torch.from_numpy(np.array(x))


mesh = jax.sharding.Mesh(jax.devices(), ("d",))
assert export(jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("d")))).tolist() == list(range(8))
assert export(jnp.arange(3.0)).tolist() == [0.0, 1.0, 2.0]
