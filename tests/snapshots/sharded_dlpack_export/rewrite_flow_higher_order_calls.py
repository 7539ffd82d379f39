# expect: BufferError: __dlpack__ only supported for unsharded arrays
# requires: multi-device, torch
"""A consumer handed by reference to a call that runs it with the array (issue 54): an
executor's `submit`, `asyncio.to_thread` and `loop.run_in_executor` call `torch.from_dlpack(x)`
or `np.from_dlpack(x)` on another thread, which raises there and again at `.result()`/`await`."""
import asyncio
from concurrent.futures import ThreadPoolExecutor

import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax.sharding import NamedSharding, PartitionSpec as P

sharding = NamedSharding(jax.sharding.Mesh(jax.devices(), ("data",)), P("data"))
batch = jax.device_put(jnp.arange(8.0), sharding)

with ThreadPoolExecutor(max_workers=2) as pool:
    tensor = pool.submit(torch.from_dlpack, batch).result()


async def to_host():
    loop = asyncio.get_running_loop()
    first = await asyncio.to_thread(np.from_dlpack, batch)
    second = await loop.run_in_executor(None, np.from_dlpack, batch)
    return first, second


first, second = asyncio.run(to_host())
assert float(tensor.sum()) == 28.0
assert float(first.sum()) == float(second.sum()) == 28.0
