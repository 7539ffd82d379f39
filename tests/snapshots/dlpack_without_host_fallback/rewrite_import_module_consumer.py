# option: target-platforms=cpu,gpu,metal
# expect: JaxRuntimeError: cannot be used as a DLPack device
"""A consumer reached through `importlib.import_module(...)` in the call itself: the one resolver
names it for every rule (JAX004 knew only a module bound to a name first; issue 29)."""
import importlib

import jax.numpy as jnp
from plugin_backend import plugin_backend


def host_view():
    y = jnp.linspace(0.0, 1.0, 4, dtype=jnp.float32)
    return y, importlib.import_module("numpy").from_dlpack(y)


y, fast = host_view()
with plugin_backend():
    _, slow = host_view()
assert (slow == fast).all() and slow.dtype == fast.dtype
