# expect: TypeError: must have __dlpack__
# fails-on: jax>=0.7.2
"""A torch capsule kept in a variable named for it (the export is a call, so the variable
stays): after the fix it holds the tensor, and its name no longer makes it look like a
capsule from nowhere -- the fixed file reports nothing."""
import jax.dlpack
import torch
import torch.utils.dlpack


def to_jax(t):
    a_dlpack = torch.utils.dlpack.to_dlpack(t.contiguous())
    return jax.dlpack.from_dlpack(a_dlpack)


make = getattr(torch, "arange")  # a tensor whose library this file does not show
assert to_jax(make(6.0).reshape(2, 3).T).tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
