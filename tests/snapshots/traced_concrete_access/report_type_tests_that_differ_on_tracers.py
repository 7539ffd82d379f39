import jax
import jax.numpy as jnp
import numpy as np

REGISTERED = []


@jax.jit
def register_placed(x):
    # A tracer has no `sharding` attribute (hasattr is False), a concrete array has one.
    if hasattr(x, "sharding"):
        REGISTERED.append(x.unsafe_buffer_pointer())
    return x * 2.0


@jax.jit
def register_when_positive(x):
    if x.sum() > 0:
        REGISTERED.append(x.unsafe_buffer_pointer())
    return x * 2.0


@jax.jit
def register_in_a_device_context(x):
    # The context changes where the traced computation runs: it cannot leave with the block.
    with jax.default_device(jax.devices()[0]):
        REGISTERED.append(x.unsafe_buffer_pointer())
    return x * 2.0
