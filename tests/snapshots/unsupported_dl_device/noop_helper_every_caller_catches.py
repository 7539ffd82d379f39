# execute: yes
"""A helper that exports to a device only known at run time, every call of which sits in a
`try` that catches what JAX raises for a device type it does not export to (BufferError,
KeyError before 0.5.1) and falls back through the host: the program works as written. Nothing
is reported (issue 54)."""
import jax.numpy as jnp
import numpy as np
import torch.utils.dlpack


def to_torch_on(x, device):
    return torch.utils.dlpack.from_dlpack(x.__dlpack__(dl_device=device))


def export(x, device):
    try:
        return to_torch_on(x, device)
    except (BufferError, KeyError):  # no export to that device type: through the host
        return torch.from_numpy(np.array(x))


assert export(jnp.arange(3.0), (1, 0)).tolist() == [0.0, 1.0, 2.0]  # the CPU: exported
assert export(jnp.arange(3.0), (4, 0)).tolist() == [0.0, 1.0, 2.0]  # OpenCL: the fallback
