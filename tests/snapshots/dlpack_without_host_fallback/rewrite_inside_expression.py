# option: target-platforms=cpu,gpu,metal
# expect: BufferError: __dlpack__ device only supported for CPU, GPU and TPU pinned host
"""Exports inside larger expressions go through one helper; NumPy is imported as `onp`."""
import jax
import jax.numpy as jnp
from plugin_backend import plugin_backend
import numpy as onp
import torch
import torch.utils.dlpack


def summaries(x: jax.Array):
    total = torch.from_dlpack(x).sum()
    rows = [onp.from_dlpack(jnp.asarray(row)) for row in x.tolist()]
    capsule_path = torch.utils.dlpack.from_dlpack(x.__dlpack__()) + 1
    return total, rows, capsule_path


x = jnp.arange(6, dtype=jnp.int32).reshape(2, 3)
fast = summaries(x)
with plugin_backend():
    slow = summaries(x)
assert slow[0].item() == fast[0].item() == 15 and slow[0].dtype == fast[0].dtype == torch.int64
for fast_row, slow_row in zip(fast[1], slow[1]):
    assert onp.array_equal(fast_row, slow_row) and slow_row.dtype == onp.int32
assert torch.equal(fast[2], slow[2]) and slow[2].dtype == torch.int32
