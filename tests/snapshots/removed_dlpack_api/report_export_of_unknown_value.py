# expect: TypeError: must have __dlpack__
# fails-on: jax>=0.7.2
"""`from_dlpack(v.__dlpack__())` and `from_dlpack(a.toDlpack())` of values the file does not
show: passing `v` itself would be a call this rule cannot tell from one given a capsule, so a
fix would leave `--check` failing at its own site. Reported with the manual fix, left as is."""
import jax.dlpack
import torch


def to_jax(value):
    # If `value` is a non-contiguous torch tensor, passing it as is reads it with the
    # wrong strides on JAX 0.6.1-0.7.1: the user's call, not an automatic one.
    return jax.dlpack.from_dlpack(value.__dlpack__())


def cupy_to_jax(a):
    return jax.dlpack.from_dlpack(a.toDlpack())


make = getattr(torch, "ones")  # a value whose library this file does not show
assert to_jax(make(3)).tolist() == [1.0, 1.0, 1.0]
