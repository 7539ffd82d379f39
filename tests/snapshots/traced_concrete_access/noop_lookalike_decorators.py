import numba
from numba import jit as numba_jit


def jit(fn):
    return fn


def grad(fn):
    return fn


@jit
def local_jit(x):
    return x.unsafe_buffer_pointer()


@grad
def local_grad(x):
    return x.on_device_size_in_bytes()


@numba_jit
def numba_kernel(x):
    return x.__dlpack__()


@numba.jit(nopython=True)
def numba_kernel2(x):
    return x.devices()


class Tools:
    def vmap(self, fn):
        return fn


tools = Tools()


@tools.vmap
def method_decorated(x):
    return x.unsafe_buffer_pointer()
