# execute: yes
"""Names rebound around DLPack the modern way: the tensor itself goes to JAX, and a name
that once held a torch capsule is rebound to a tensor before JAX reads it."""
import jax.dlpack
import jax.numpy as jnp
import torch
import torch.utils.dlpack


def convert_to_jax(x):
    if isinstance(x, torch.Tensor):
        x = x.detach().contiguous()
        x = jax.dlpack.from_dlpack(x)
    return x


def roundtrip(x):
    x = torch.utils.dlpack.to_dlpack(x)
    x = torch.utils.dlpack.from_dlpack(x)
    x = jax.dlpack.from_dlpack(x)
    return x


def each(tensors):
    out = []
    for t in tensors:
        t = torch.utils.dlpack.to_dlpack(t)
        t = torch.from_dlpack(t)
        out.append(jnp.from_dlpack(t.contiguous()))
    return out


assert convert_to_jax(torch.arange(4.0).reshape(2, 2).T).tolist() == [[0.0, 2.0], [1.0, 3.0]]
assert roundtrip(torch.ones(2)).tolist() == [1.0, 1.0]
assert [a.tolist() for a in each([torch.ones(1)])] == [[1.0]]
