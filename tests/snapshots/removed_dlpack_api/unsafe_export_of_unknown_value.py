# expect: TypeError: must have __dlpack__
# fails-on: jax>=0.7.2
"""`from_dlpack(v.__dlpack__())` of a value the file does not show: `v` has `__dlpack__`, so
passing it is the fix, unsafe because a non-contiguous torch tensor would be read with the
wrong strides on JAX 0.6.1-0.7.1. (With `report-unknown-origin = true` the fix is withheld:
the call it leaves would be reported again.)"""
import jax.dlpack
import torch


def to_jax(value):
    # If `value` is a non-contiguous torch tensor, passing it as is reads it with the
    # wrong strides on JAX 0.6.1-0.7.1: the user's call, not an automatic one.
    return jax.dlpack.from_dlpack(value.__dlpack__())


make = getattr(torch, "ones")  # a value whose library this file does not show
assert to_jax(make(3)).tolist() == [1.0, 1.0, 1.0]
