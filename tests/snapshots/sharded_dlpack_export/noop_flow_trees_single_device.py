# execute: yes
# requires: multi-device
"""The new flows with values that are on one device or not JAX arrays: nothing to gather.
A `partial(jax.device_put, ...)` to one device or a SingleDeviceSharding, a tree placed by
single-device shardings, loaders that yield host NumPy batches or one-device arrays (one
gathers its sharded batch before it yields it), a dict of host arrays walked with
`.items()`, and records built from one-device arrays exporting their own fields."""
import functools
from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax.sharding import NamedSharding, PartitionSpec as P, SingleDeviceSharding

mesh = jax.sharding.Mesh(jax.devices(), ("data",))
first_device = SingleDeviceSharding(jax.devices()[0])
to_first = functools.partial(jax.device_put, device=first_device)
to_last = functools.partial(jax.device_put, device=jax.devices()[-1])

on_first = torch.from_dlpack(to_first(np.ones(4, np.float32)))
on_last = np.from_dlpack(to_last(jnp.arange(4.0)))

batch = jax.device_put({"x": np.ones(3), "y": np.zeros(3)}, {"x": first_device, "y": first_device})
x_t = torch.from_dlpack(batch["x"])
pair = jax.device_put((np.ones(2), np.ones(2)), (first_device, SingleDeviceSharding(jax.devices()[1])))
second = np.from_dlpack(pair[1])


def host_batches():
    for step in range(2):
        yield np.full((4,), float(step), np.float32)


def device_batches():
    yield jax.device_put(jnp.ones(4), first_device)


host_sum = sum(float(torch.from_dlpack(b).sum()) for b in host_batches())
one = np.from_dlpack(next(device_batches()))

stats = {"mean": np.float32(1.0) * np.ones(2), "max": np.ones(2)}
for name, value in stats.items():
    torch.from_dlpack(value)


class Batch(NamedTuple):
    images: jax.Array

    def to_torch(self):
        return torch.from_dlpack(self.images)


@dataclass
class State:
    params: jax.Array


def export(state: State):
    return np.from_dlpack(state.params)


images_t = Batch(jnp.ones((2, 2))).to_torch()
params_np = export(State(jax.device_put(jnp.ones(3), first_device)))



def gathered_batches():
    # A sharded batch gathered onto one device before it is yielded.
    sharded = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("data")))
    yield jax.device_put(sharded, first_device)


gathered = next(iter(gathered_batches()))
assert on_first.shape == (4,) and on_last.sum() == 6.0 and x_t.sum() == 3.0 and second.sum() == 2.0
assert host_sum == 4.0 and one.sum() == 4.0 and images_t.sum() == 4.0 and params_np.sum() == 3.0
assert np.from_dlpack(gathered).sum() == 28.0
