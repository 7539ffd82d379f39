import mylib.dlpack
import torch
from torch.utils.dlpack import from_dlpack, to_dlpack


def to_dlpack_local(x):
    return x


# torch capsules into torch are still supported; mylib is not jax.
t = from_dlpack(to_dlpack(torch.ones(2)))
m = mylib.dlpack.to_dlpack(t)
