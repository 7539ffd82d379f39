# expect: TypeError: must have __dlpack__
# fails-on: jax>=0.7.2
"""torch -> JAX through a capsule with `copy=False` (lebrice/torch_jax_interop's to_jax.py).

JAX 0.7.2+ takes the tensor itself, but will not alias a CPU buffer that is not 64-byte aligned:
with `copy=False` that raises ValueError, where the capsule was copied. The fix passes the tensor
and drops `copy=False` (a capsule kept in a variable gets an unsafe fix instead: `copy=False`
stays there)."""
import numpy as np
import torch
from jax.dlpack import from_dlpack as jax_from_dlpack
from torch.utils.dlpack import to_dlpack as torch_to_dlpack


def to_jax(v):
    return jax_from_dlpack(torch_to_dlpack(v), copy=False)


values = np.arange(6, dtype=np.float32)
base = np.empty(values.size + 32, np.float32)
offset = ((64 - base.ctypes.data % 64) % 64) // 4 + 1  # 4 bytes past a 64-byte boundary
unaligned = torch.from_numpy(base[offset : offset + values.size])
unaligned[:] = torch.from_numpy(values)
assert unaligned.data_ptr() % 64 == 4
assert np.asarray(to_jax(unaligned)).tolist() == values.tolist()
assert np.asarray(to_jax(torch.arange(6.0).reshape(2, 3).T)).tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
