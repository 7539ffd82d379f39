# expect: BufferError: to_dlpack can only pack a dlpack tensor from an array on a singular device
# requires: multi-device
"""Sharded batches yielded by a data loader (a generator, an async generator, and one that
delegates with `yield from`), consumed with `for`, `async for` and `next(...)` by PyTorch."""
import asyncio

import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.sharding.Mesh(jax.devices(), ("data",))
sharding = NamedSharding(mesh, P("data"))


def batches(count):
    for step in range(count):
        yield jax.device_put(jnp.full((8, 2), float(step)), sharding)


def epochs(count):
    for _ in range(2):
        yield from batches(count)


async def stream(count):
    for step in range(count):
        await asyncio.sleep(0)
        yield jax.device_put(jnp.full((8,), float(step)), sharding)


first = np.from_dlpack(next(batches(3)))

total = 0.0
for batch in epochs(3):
    total += float(torch.from_dlpack(batch).sum())


async def consume():
    sums = []
    async for chunk in stream(2):
        sums.append(float(torch.from_dlpack(chunk).sum()))
    return sums


assert first.shape == (8, 2) and total == 2 * 16 * (0 + 1 + 2)
assert asyncio.run(consume()) == [0.0, 8.0]
