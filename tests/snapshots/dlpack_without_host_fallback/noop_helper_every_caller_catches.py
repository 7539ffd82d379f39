# option: target-platforms=cpu,tpu
# execute: yes
# requires: torch
"""On a TPU target, a helper whose torch export raises BufferError on a TPU, every call of
which sits in a `try` that catches it and copies through the host: the program works on every
platform as written. Nothing is reported (issue 54). Runs under the simulated TPU on a CPU."""
import jax.numpy as jnp
import numpy as np
import torch
from platform_sim import simulated


def to_torch(x):
    return torch.from_dlpack(x)


def export(x):
    try:
        return to_torch(x)
    except BufferError:  # no DLPack export of this platform's memory: through the host
        return torch.from_numpy(np.array(x))


assert export(jnp.arange(3.0)).tolist() == [0.0, 1.0, 2.0]
with simulated("tpu"):
    assert export(jnp.arange(4.0)).tolist() == [0.0, 1.0, 2.0, 3.0]
