# expect: BufferError: __dlpack__ only supported for unsharded arrays
# requires: multi-device, torch
"""A sharded batch passed to a `functools.singledispatch` converter whose overload for JAX arrays
exports it, the overload registered by type (`@to_torch.register(jax.Array)`) or by annotation
(`@to_numpy.register` with `value: jax.Array`): the overload's parameter holds the JAX arrays the
dispatcher's calls pass (issue 54: it was a JAX array of unknown placement, so the sharded
export got JAX006's unsafe fix instead of a gather)."""
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


@functools.singledispatch
def to_numpy(value):
    return np.asarray(value)


@to_numpy.register
def _(value: jax.Array):
    return np.from_dlpack(value)


mesh = jax.sharding.Mesh(jax.devices()[:4], ("x",))
x = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("x")))
assert torch.equal(to_torch(x), torch.arange(8.0))
assert torch.equal(to_torch(np.arange(3.0)), torch.arange(3.0, dtype=torch.float64))
np.testing.assert_array_equal(to_numpy(x), np.arange(8.0))
np.testing.assert_array_equal(to_numpy([1.0, 2.0]), np.array([1.0, 2.0]))
