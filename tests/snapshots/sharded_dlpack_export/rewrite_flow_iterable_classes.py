# expect: BufferError: __dlpack__ only supported for unsharded arrays
# requires: multi-device
"""Sharded batches from data-loader classes, iterated with `for`, `next(iter(...))` and
`async for`: one whose `__iter__` is a generator, one whose `__iter__` returns an iterator over
the batches it holds, one that is its own iterator (`__next__` places each batch), one whose
`__aiter__` is an async generator, and a dataset indexed and iterated through its `__getitem__`
(the sequence protocol)."""
import asyncio

import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.sharding.Mesh(jax.devices(), ("data",))
sharding = NamedSharding(mesh, P("data"))


class Loader:
    def __init__(self, count):
        self.count = count

    def __iter__(self):
        for step in range(self.count):
            yield jax.device_put(jnp.full((8, 2), float(step)), sharding)


class Prefetched:
    def __init__(self, count):
        self.batches = [jax.device_put(jnp.full((8,), float(step)), sharding) for step in range(count)]

    def __iter__(self):
        return iter(self.batches)


class Countdown:
    def __init__(self, count):
        self.left = count

    def __iter__(self):
        return self

    def __next__(self):
        if not self.left:
            raise StopIteration
        self.left -= 1
        return jax.device_put(jnp.full((8,), float(self.left)), sharding)


class Stream:
    def __init__(self, count):
        self.count = count

    async def __aiter__(self):
        for step in range(self.count):
            await asyncio.sleep(0)
            yield jax.device_put(jnp.full((8,), float(step)), sharding)


class Dataset:
    def __len__(self):
        return 2

    def __getitem__(self, index):
        if index >= len(self):
            raise IndexError(index)
        return jax.device_put(jnp.full((8,), float(index)), sharding)


total = 0.0
for batch in Loader(3):
    total += float(torch.from_dlpack(batch).sum())

first = np.from_dlpack(next(iter(Prefetched(2))))
counted = [float(np.from_dlpack(batch).sum()) for batch in Countdown(2)]
dataset = Dataset()
indexed = [float(torch.from_dlpack(dataset[i]).sum()) for i in range(len(dataset))]
iterated = [float(np.from_dlpack(item).sum()) for item in dataset]


async def consume():
    sums = []
    async for chunk in Stream(2):
        sums.append(float(torch.from_dlpack(chunk).sum()))
    return sums


assert total == 16 * (0 + 1 + 2)
assert first.shape == (8,) and float(first.sum()) == 0.0
assert counted == [8.0, 0.0]
assert indexed == iterated == [0.0, 8.0]
assert asyncio.run(consume()) == [0.0, 8.0]
