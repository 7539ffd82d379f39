# expect: AttributeError: to_dlpack
# fails-on: jax>=0.7.0
"""Version gates whose branch for current JAX still uses the removed API."""
import jax
import jax.dlpack
import jax.numpy as jnp
import torch
import torch.utils.dlpack

try:
    from jax.dlpack import to_dlpack
except ImportError:
    to_dlpack = None


def export(x):
    # inverted check: this branch runs on JAX 0.7+, where to_dlpack is gone
    if jax.__version_info__ >= (0, 7, 0):
        return torch.utils.dlpack.from_dlpack(jax.dlpack.to_dlpack(x))
    return torch.from_dlpack(x)


def export_optional(x):
    # the fallback leaves to_dlpack None, and nothing checks it
    return torch.utils.dlpack.from_dlpack(to_dlpack(x))


assert export(jnp.arange(3.0)).tolist() == [0.0, 1.0, 2.0]
assert export_optional(jnp.ones(2)).tolist() == [1.0, 1.0]
