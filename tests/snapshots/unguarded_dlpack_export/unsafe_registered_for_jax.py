# expect: BufferError: __dlpack__ only supported for unsharded arrays
# requires: multi-device
"""A singledispatch converter's implementation registered for jax.Array, called with arrays whose
placement the file does not show (a parameter annotated `jax.Array`). Where the dispatcher's
calls pass a sharded array the export is JAX002's (sharded_dlpack_export/
rewrite_flow_singledispatch.py)."""
import functools

import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax.sharding import NamedSharding, PartitionSpec as P


@functools.singledispatch
def to_torch(value):
    return torch.as_tensor(value)


@to_torch.register(jax.Array)
def _(value):
    return torch.from_dlpack(value)


@to_torch.register
def _(value: np.ndarray):
    return torch.from_numpy(value)


def export(batch: jax.Array):
    return to_torch(batch)


mesh = jax.sharding.Mesh(jax.devices()[:4], ("x",))
x = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("x")))
assert torch.equal(export(x), torch.arange(8.0))
assert torch.equal(to_torch(np.arange(3.0)), torch.arange(3.0, dtype=torch.float64))
