# option: target-platforms=cpu,gpu,metal
# expect: BufferError: __dlpack__ device only supported for CPU, GPU and TPU pinned host
"""Whole-statement exports to PyTorch: assignment, annotated assignment, return."""
import jax
import jax.numpy as jnp
from plugin_backend import plugin_backend
import numpy as np
import torch


def to_torch(x: jax.Array):
    # The zero-copy export.
    t = torch.from_dlpack(x)  # shares memory on CPU/GPU
    return t


def doubled(x: jax.Array) -> torch.Tensor:
    t: torch.Tensor = torch.from_dlpack(x * 2)
    return t


def as_tensor(x: jnp.ndarray):
    return torch.from_dlpack(x)


x = jnp.arange(6.0, dtype=jnp.float32).reshape(2, 3)
fast = to_torch(x)
if jax.default_backend() == "cpu":  # zero-copy stays where JAX exports (on a TPU: a host copy)
    assert fast.data_ptr() == x.unsafe_buffer_pointer(), "CPU keeps the zero-copy path"
with plugin_backend():
    results = [to_torch(x), doubled(x) / 2, as_tensor(x)]
for slow in results:
    assert torch.equal(slow, fast) and slow.dtype == torch.float32
assert results[0].data_ptr() != x.unsafe_buffer_pointer()
