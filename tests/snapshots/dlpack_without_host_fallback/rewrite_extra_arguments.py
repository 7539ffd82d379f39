# option: target-platforms=cpu,gpu,metal
# expect: JaxRuntimeError: cannot be used as a DLPack device
# requires: numpy>=2.1
"""Extra arguments stay: `copy=True` asks for a copy, which the exportable array gives as well;
`device="cpu"` already copies to the host on every platform, so it is left alone."""
import jax.numpy as jnp
import numpy as np
from plugin_backend import plugin_backend

x = jnp.arange(3.0)
with plugin_backend():
    a = np.from_dlpack(x, copy=True)
    b = np.from_dlpack(x, device="cpu")
assert a.tolist() == b.tolist() == [0.0, 1.0, 2.0]
