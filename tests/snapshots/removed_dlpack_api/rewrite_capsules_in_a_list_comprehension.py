# expect: TypeError: must have __dlpack__
# fails-on: jax>=0.7.2
"""Capsules made in a list comprehension that only feeds JAX: the list holds the tensors
instead, and the fixed file reports nothing -- each element it iterates is a tensor
method's result, so it is no capsule of unknown origin."""
import jax
import jax.dlpack
import torch
import torch.utils.dlpack


def tensors_to_jax(tensors):
    packs = [torch.utils.dlpack.to_dlpack(t) for t in tensors]
    return [jax.dlpack.from_dlpack(p) for p in packs]


make = getattr(torch, "arange")  # tensors whose library this file does not show
out = tensors_to_jax([make(3.0), make(6.0).reshape(2, 3).T])
assert [o.tolist() for o in out] == [[0.0, 1.0, 2.0], [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]]
