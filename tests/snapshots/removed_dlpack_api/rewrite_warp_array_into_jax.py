# expect: TypeError: must have __dlpack__
# fails-on: jax>=0.7.2
"""`jax.dlpack.from_dlpack(wp.to_dlpack(a))`, as NVIDIA Warp's own `warp.to_jax` wrote it (warp/jax.py
in Warp 1.5): `warp.to_dlpack` takes a Warp array, which has `__dlpack__` and `__dlpack_device__`,
so the call itself shows that `a` is an array JAX takes as it is, and `a` is passed instead (as
Warp's documentation says: `jax.dlpack.from_dlpack(wp_array)`). Where Warp is not installed, a
stand-in with what the conversion reads of a Warp array (a host buffer's protocol) takes its place."""
import importlib.util
import sys
import types

import jax.dlpack
import numpy as np

if "warp" not in sys.modules and importlib.util.find_spec("warp") is None:

    class HostWarpArray:
        """What the conversion reads of a Warp array on the CPU: the array protocol."""

        def __init__(self, values, device=None):
            self.values = np.asarray(values)

        def __dlpack__(self, **kwargs):
            return self.values.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return self.values.__dlpack_device__()

    stand_in = types.ModuleType("warp")
    stand_in.array = HostWarpArray
    stand_in.to_dlpack = lambda array: array.__dlpack__()
    sys.modules["warp"] = stand_in

import warp as wp


def to_jax(warp_array):
    return jax.dlpack.from_dlpack(wp.to_dlpack(warp_array))


values = np.arange(6, dtype=np.float32)
np.testing.assert_array_equal(np.asarray(to_jax(wp.array(values, device="cpu"))), values)
