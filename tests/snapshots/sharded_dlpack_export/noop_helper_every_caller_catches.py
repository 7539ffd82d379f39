# execute: yes
# requires: multi-device, torch
"""A helper that exports its parameter, every call of which sits in a `try` whose handler
catches the export's BufferError (directly, or through a caller that is itself always called
so): a sharded array raises there and the caller falls back to the host. The program is correct
as written; nothing is reported, nothing is gathered (issue 54)."""
import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax.sharding import NamedSharding, PartitionSpec as P


def to_torch(x):
    return torch.from_dlpack(x)


def export(x):
    try:
        return to_torch(x)
    except BufferError:  # a multi-device array has no single buffer: go through the host
        return torch.from_numpy(np.array(x))


def to_torch_twice(x):
    return torch.from_dlpack(x), torch.from_dlpack(x)


def inner(x):
    return to_torch_twice(x)


def export_pair(x):
    try:
        return inner(x)
    except Exception:  # a base of BufferError catches it too
        host = torch.from_numpy(np.array(x))
        return host, host


mesh = jax.sharding.Mesh(jax.devices(), ("d",))
sharded = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("d")))
assert export(sharded).tolist() == list(range(8))
assert export(jnp.arange(4.0)).tolist() == [0.0, 1.0, 2.0, 3.0]
assert [t.tolist() for t in export_pair(sharded)] == [list(range(8))] * 2
