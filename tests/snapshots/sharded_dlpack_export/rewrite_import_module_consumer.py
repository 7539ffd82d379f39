# expect: BufferError: __dlpack__ only supported for unsharded arrays
# requires: multi-device
"""A consumer reached through `importlib.import_module(...)` in the call itself: the one resolver
names it for every rule (JAX002 knew only a module bound to a name first; issue 29)."""
import importlib

import jax
import jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(jax.devices()[:4], ("x",))
spread = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("x")))

assert importlib.import_module("torch.utils.dlpack").from_dlpack(spread).sum().item() == 28.0
