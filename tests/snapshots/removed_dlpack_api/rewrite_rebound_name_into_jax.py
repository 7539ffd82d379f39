# expect: TypeError: must have __dlpack__
# fails-on: jax>=0.7.2
"""One name rebound tensor -> capsule -> array (subho406/pytorch2jax, skrl, many bridges):
only the next read sees the capsule, so the capsule line goes in straight-line code, in a
branch and in a loop, and the names read after it keep what they held."""
import jax.dlpack
import jax.numpy as jnp
import torch
import torch.utils.dlpack
from torch.utils.dlpack import to_dlpack as pyt_to_dlpack


def convert_to_jax(x):
    if isinstance(x, torch.Tensor):
        x = pyt_to_dlpack(x)
        x = jax.dlpack.from_dlpack(x)
    return x


def straight(t):
    t = torch.utils.dlpack.to_dlpack(t)
    t = jnp.from_dlpack(t)
    return t * 2


def either(t, flip):
    if flip:
        t = t.flip(0)
    else:
        t = t + 1
    t = torch.utils.dlpack.to_dlpack(t)
    t = jax.dlpack.from_dlpack(t)
    return t


def each(tensors):
    out = []
    for t in tensors:
        t = torch.utils.dlpack.to_dlpack(t)
        t = jax.dlpack.from_dlpack(t)
        out.append(t)
    return out


base = torch.arange(6.0).reshape(2, 3)
assert convert_to_jax(base.T).tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
assert convert_to_jax(3) == 3
assert straight(base[:, ::2]).tolist() == [[0.0, 4.0], [6.0, 10.0]]
assert either(torch.arange(3.0), True).tolist() == [2.0, 1.0, 0.0]
assert either(torch.arange(3.0), False).tolist() == [1.0, 2.0, 3.0]
assert [a.tolist() for a in each([base.T, torch.ones(2, requires_grad=True)])] == [
    [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]], [1.0, 1.0]]
