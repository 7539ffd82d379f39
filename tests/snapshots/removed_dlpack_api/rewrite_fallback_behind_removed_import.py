# expect: ImportError: to_dlpack
# fails-on: jax>=0.7.0
"""A fallback to the removed API behind a module-level import (lebrice/torch_jax_interop's
to_torch.py): the call runs only where the array protocol failed, but the import fails first
on JAX 0.7+. The call makes the same capsule with `__dlpack__()`, so the import goes."""
import jax
import jax.numpy as jnp
import torch.utils.dlpack as torch_dlpack
from jax.dlpack import to_dlpack as jax_to_dlpack  # type: ignore (not exported there?)


def jax_to_torch_tensor(value: jax.Array, /):
    try:
        return torch_dlpack.from_dlpack(value)
    except Exception:
        return torch_dlpack.from_dlpack(jax_to_dlpack(value))


assert jax_to_torch_tensor(jnp.arange(4.0)).tolist() == [0.0, 1.0, 2.0, 3.0]
