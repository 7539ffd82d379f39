# expect: TypeError: must have __dlpack__
# fails-on: jax>=0.7.2
"""`from_dlpack(a.toDlpack())`: `toDlpack` is CuPy's array method, so the call itself shows
that `a` is an array with `__dlpack__`, and `a` is passed instead (issue 54, decision 1). The
array below stands in for a CuPy one (no GPU here): NumPy's buffer behind CuPy's method."""
import jax.dlpack
import numpy as np


def cupy_to_jax(a):
    return jax.dlpack.from_dlpack(a.toDlpack())


class HostCupyArray:
    """What the conversion reads of a CuPy array: `toDlpack()` and the array protocol."""

    def __init__(self, values):
        self.values = np.asarray(values)

    def toDlpack(self):
        return self.values.__dlpack__()

    def __dlpack__(self, **kwargs):
        return self.values.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.values.__dlpack_device__()


assert cupy_to_jax(HostCupyArray([1.0, 2.0])).tolist() == [1.0, 2.0]
