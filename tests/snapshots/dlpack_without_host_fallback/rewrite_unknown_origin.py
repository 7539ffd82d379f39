# option: target-platforms=cpu,tpu
# expect: BufferError: __dlpack__ device only supported for CPU and GPU, got platform: tpu
"""On a TPU target, a DLPack export of a value of unknown origin (a parameter) is fixed too: in a
TPU project it is most often a JAX array, and the helper hands any array that exports (torch's,
NumPy's) over unchanged. Runs under the simulated TPU on a CPU, and for real on a TPU."""
import jax.numpy as jnp
import numpy as np
import torch
from platform_sim import simulated


def untyped(x):
    return torch.from_dlpack(x)


def reassigned(flag):
    y = jnp.ones(3)
    if flag:
        y = np.ones(3)
    return torch.from_dlpack(y)  # a JAX array where flag is false


def loop(arrays):
    return [np.from_dlpack(a) for a in arrays]


with simulated("tpu"):
    x = jnp.arange(4.0)
    assert untyped(x).tolist() == [0.0, 1.0, 2.0, 3.0]
    assert [a.sum() for a in loop([x, x + 1])] == [6.0, 10.0]
    assert untyped(torch.ones(2)).tolist() == [1.0, 1.0]  # a torch tensor passes unchanged
    assert loop([np.ones(2)])[0].tolist() == [1.0, 1.0]
    assert reassigned(False).tolist() == reassigned(True).tolist() == [1.0, 1.0, 1.0]
