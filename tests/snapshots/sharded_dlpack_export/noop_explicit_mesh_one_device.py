# requires: multi-device, jax>=0.7.1
# execute: yes
"""Explicit sharding mode, but the exported array is put on one device first: nothing to gather."""
import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax.sharding import AxisType

mesh = jax.make_mesh((4,), ("data",), axis_types=(AxisType.Explicit,))

with jax.set_mesh(mesh):
    params = jnp.ones(8)
    host_copy = jax.device_put(np.asarray(params), jax.devices()[0])
    exported = torch.from_dlpack(host_copy)

assert torch.equal(exported, torch.ones(8))
