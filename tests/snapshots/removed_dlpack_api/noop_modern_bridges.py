# execute: yes
"""Modern bridges: parameters fed to from_dlpack are arrays, not capsules."""
import jax.dlpack
import jax.numpy as jnp
import torch
import torch.utils.dlpack


def t2j(x_torch):
    return jax.dlpack.from_dlpack(x_torch.contiguous())


def tree_t2j(*tensors: torch.Tensor):
    return [jnp.from_dlpack(t) for t in tensors]


def torch_roundtrip(t):
    # torch capsules into torch are still supported
    return torch.utils.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(t))


assert t2j(torch.ones(2)).tolist() == [1.0, 1.0]
assert [a.tolist() for a in tree_t2j(torch.zeros(1), torch.ones(1))] == [[0.0], [1.0]]
assert torch_roundtrip(torch.ones(2)).tolist() == [1.0, 1.0]
