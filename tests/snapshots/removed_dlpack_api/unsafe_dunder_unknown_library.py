# expect: TypeError: must have __dlpack__
# fails-on: jax>=0.7.2
"""`v.__dlpack__()` of a value whose library the file does not show."""
import jax.dlpack
import torch


def to_jax(value):
    # If `value` is a non-contiguous torch tensor, passing it as is reads it with the
    # wrong strides on JAX 0.6.1-0.7.1: hence an unsafe fix.
    return jax.dlpack.from_dlpack(value.__dlpack__())


make = getattr(torch, "ones")  # a value whose library this file does not show
assert to_jax(make(3)).tolist() == [1.0, 1.0, 1.0]
