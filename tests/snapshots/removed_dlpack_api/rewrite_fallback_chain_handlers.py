# expect: AttributeError: to_dlpack
# requires: multi-device
# fails-on: jax>=0.7.0
"""`to_dlpack` in a fallback chain is not behind a version gate when the handler around it runs
on new JAX too: one that catches BufferError (the array protocol's own error for a sharded
array) after the new export, or one that does not catch the AttributeError the removed name
raises. On new JAX both reached `to_dlpack` and escaped with AttributeError instead of
reaching their host-copy fallback."""
import jax
import jax.dlpack
import jax.numpy as jnp
import numpy as np
import torch
import torch.utils.dlpack as torchdl
from jax.sharding import NamedSharding, PartitionSpec as P


def to_torch(x):
    try:
        return torch.from_dlpack(x)
    except (TypeError, RuntimeError, BufferError):
        try:
            capsule = jax.dlpack.to_dlpack(x)
            return torchdl.from_dlpack(capsule)
        except (TypeError, RuntimeError, BufferError):
            return torch.from_numpy(np.asarray(x))


def to_torch_old_first(x):
    try:
        return torchdl.from_dlpack(jax.dlpack.to_dlpack(x))
    except BufferError:
        return torch.from_numpy(np.asarray(x))


mesh = jax.sharding.Mesh(jax.devices(), ("data",))
sharded = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("data")))
assert to_torch(sharded).tolist() == list(range(8))
assert to_torch(jnp.ones(2)).tolist() == [1.0, 1.0]
assert to_torch_old_first(sharded).tolist() == list(range(8))
