# execute: yes
"""Names that say "capsule" on values the file shows are tensors -- a tensor method's result, the
elements of a list of them -- are fed to JAX as they are: correct on every JAX, never reported
(this is also what JAX005's own fixes leave behind)."""
import jax.dlpack
import torch


def to_jax(t):
    a_dlpack = t.contiguous().detach()
    return jax.dlpack.from_dlpack(a_dlpack)


def each_to_jax(tensors):
    capsules = [t.detach().contiguous() for t in tensors]
    return [jax.dlpack.from_dlpack(c) for c in capsules]


make = getattr(torch, "arange")  # tensors whose library this file does not show
assert to_jax(make(6.0).reshape(2, 3).T).tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
assert [x.tolist() for x in each_to_jax([make(2.0), make(3.0)])] == [[0.0, 1.0], [0.0, 1.0, 2.0]]
