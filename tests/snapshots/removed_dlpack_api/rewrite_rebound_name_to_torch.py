# expect: ImportError: to_dlpack
# fails-on: jax>=0.7.0
"""One name rebound array -> capsule -> tensor, from JAX to torch, in straight-line code, a
branch and a loop: the capsule line goes and the consumer gets the array."""
import jax.numpy as jnp
import torch
import torch.utils.dlpack
from jax.dlpack import to_dlpack as jax_to_dlpack


def convert_to_pyt(x):
    if isinstance(x, jnp.ndarray):
        x = jax_to_dlpack(x)
        x = torch.utils.dlpack.from_dlpack(x)
    return x


def each(arrays):
    out = []
    while arrays:
        x = arrays.pop()
        x = jax_to_dlpack(x)
        x = torch.from_dlpack(x)
        out.append(x)
    return out


assert convert_to_pyt(jnp.arange(4.0).reshape(2, 2).T).tolist() == [[0.0, 2.0], [1.0, 3.0]]
assert convert_to_pyt("not an array") == "not an array"
assert [t.tolist() for t in each([jnp.ones(1), jnp.zeros(2)])] == [[0.0, 0.0], [1.0]]
