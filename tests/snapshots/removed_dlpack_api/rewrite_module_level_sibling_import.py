# expect: ImportError: to_dlpack
# requires: jax>=0.7.0
"""Module-level branches import JAX's and torch's `to_dlpack` under one name: once the JAX
branch's call is migrated its failing import goes, and torch's branch keeps its own."""
import os

import jax.numpy as jnp
import torch.utils.dlpack

x = jnp.arange(3.0)
if os.environ.get("INTEROP_BACKEND", "jax") == "jax":
    from jax.dlpack import to_dlpack

    t = torch.utils.dlpack.from_dlpack(to_dlpack(x))
else:
    from torch.utils.dlpack import to_dlpack

    t = torch.utils.dlpack.from_dlpack(to_dlpack(torch.arange(3.0)))
assert t.tolist() == [0.0, 1.0, 2.0]
