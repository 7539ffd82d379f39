# execute: yes
"""A version flag refined by a second assignment (`FLAG = FLAG and <torch test>`) still gates
the old branch: it runs only where JAX is old, so its `to_dlpack` is left alone."""
import jax
import jax.numpy as jnp
import torch
from jax import dlpack as jax_dlpack
from torch.utils import dlpack as torch_dlpack


def _at_least(version, wanted):
    return tuple(int(p) for p in version.split(".")[:3] if p.isdigit()) >= tuple(map(int, wanted.split(".")))


_FULL_DLPACK = _at_least(jax.__version__, "0.4.16")
_FULL_DLPACK = _FULL_DLPACK and _at_least(torch.__version__.split("+")[0], "1.10.0")


def to_torch(value: jax.Array):
    if _FULL_DLPACK:
        tensor = torch_dlpack.from_dlpack(value)
    else:
        tensor = jax_dlpack.to_dlpack(value)
        tensor = torch_dlpack.from_dlpack(tensor)
    return tensor


def to_jax(value: torch.Tensor):
    if _FULL_DLPACK:
        return jax_dlpack.from_dlpack(value)
    tensor = torch_dlpack.to_dlpack(value)
    return jax_dlpack.from_dlpack(tensor)


assert to_torch(jnp.arange(3.0)).tolist() == [0.0, 1.0, 2.0]
assert to_jax(torch.ones(2)).tolist() == [1.0, 1.0]
