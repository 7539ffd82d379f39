import jax
import jax.numpy as jnp


@jax.jit
def tag_with_address(x):
    # The pointer is part of the result: it cannot leave the trace.
    return x + x.unsafe_buffer_pointer()


@jax.jit
def offset_by_size(x):
    size = x.on_device_size_in_bytes()
    y = x * 2
    return y + size


@jax.jit
def only_reports(x):
    return x.unsafe_buffer_pointer()
