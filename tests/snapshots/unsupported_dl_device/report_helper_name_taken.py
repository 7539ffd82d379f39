import jax.numpy as jnp
from mylib import _dlpack_or_native_device


def export(x, device):
    return [x.__dlpack__(dl_device=device)]
