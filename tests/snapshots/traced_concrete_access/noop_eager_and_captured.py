import functools

import jax
import jax.numpy as jnp
import numpy as np
import torch

TABLE = jnp.arange(8.0)
POINTERS = []


def eager(x):
    POINTERS.append(x.unsafe_buffer_pointer())
    shards = x.addressable_shards
    return torch.from_dlpack(x), np.asarray(x), x.devices(), shards, x.on_device_size_in_bytes()


@jax.jit
def gather(i):
    # TABLE is a concrete module-level array: its pointer is fine inside the trace.
    POINTERS.append(TABLE.unsafe_buffer_pointer())
    return TABLE[i]


def make(weights):
    @jax.jit
    def apply(x):
        POINTERS.append(weights.unsafe_buffer_pointer())  # closure capture: concrete
        local = np.asarray(weights)
        return x * local.sum()

    return apply


@jax.jit
def static_attributes(x):
    shape = np.asarray(x.shape)
    rows = np.array(x.shape)[0]
    kind = x.dtype, x.ndim, x.size
    return jnp.reshape(x, (rows, -1)) if shape.size and kind else x


@functools.partial(jax.jit, static_argnums=(1,), static_argnames=("table",))
def with_static(x, shape, table=None):
    dims = np.asarray(shape)
    return jnp.zeros(dims) + x


@jax.jit
def already_split(x):
    return x * 2


def already_wrapper(x):
    POINTERS.append(x.unsafe_buffer_pointer())
    return already_split(x)


@jax.jit
def unknown_helper(x):
    # An unknown call's result is not assumed to be a tracer.
    data = load_table()
    return x + np.asarray(data).sum()


def load_table():
    return np.ones(3)


@functools.partial(jax.jit, static_argnums=STATIC)
def unknown_statics(x, table):
    return x + np.asarray(table).sum()


STATIC = (1,)
