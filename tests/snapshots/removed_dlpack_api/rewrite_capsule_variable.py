# expect: TypeError: must have __dlpack__
# fails-on: jax>=0.7.2
"""A torch capsule held in a variable on its way into JAX: the variable goes."""
import jax.dlpack
import torch
import torch.utils.dlpack


def torch2jax(x):
    # the pattern of many bridges: rebinding one name through the capsule
    x = torch.utils.dlpack.to_dlpack(x)
    x = jax.dlpack.from_dlpack(x)
    return x


t = torch.ones(3)
capsule = torch.utils.dlpack.to_dlpack(t)
y = jax.dlpack.from_dlpack(capsule)
assert y.tolist() == [1.0, 1.0, 1.0]
assert torch2jax(torch.arange(6.0).reshape(2, 3).T).tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
