# option: target-platforms=cpu,gpu,metal
# expect: BufferError: __dlpack__ device only supported for CPU, GPU and TPU pinned host
"""The function binds `np` itself (a test's random generator): the host fallback spells numpy
with a name that is numpy there, never the local `np`."""
import jax.numpy as jnp
from plugin_backend import plugin_backend
import numpy as np
import torch


def to_torch(seed):
    np = jnp.asarray(seed)  # shadows the module's numpy
    x = jnp.arange(3.0) + np
    t = torch.from_dlpack(x)
    return t


expected = torch.tensor([1.0, 2.0, 3.0])
with plugin_backend():
    assert torch.equal(to_torch(1.0), expected)
assert np.asarray(expected).tolist() == [1.0, 2.0, 3.0]
