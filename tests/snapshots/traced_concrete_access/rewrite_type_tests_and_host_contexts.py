# expect: ConcretizationTypeError: unsafe_buffer_pointer
# requires: torch
import jax
import jax.numpy as jnp
import numpy as np
import torch

REGISTERED = []
MIRRORS = {}


@jax.jit
def register_and_scale(x):
    # Only JAX arrays are registered with the native library (a tracer is a jax.Array too).
    if isinstance(x, jax.Array):
        REGISTERED.append(x.unsafe_buffer_pointer())
    return x * 2.0


@jax.jit
def mirror_and_shift(x):
    # PyTorch reads the input for its bookkeeping, outside autograd.
    with torch.no_grad():
        MIRRORS["x"] = torch.from_dlpack(x).clone()
    return x + 1.0


@jax.jit
def checked_square(x):
    assert x.is_fully_addressable, "a single-process array"
    if x.ndim > 1:
        assert x.is_fully_replicated
    return x * x


x = jnp.arange(4.0)
assert jnp.allclose(register_and_scale(x), x * 2.0)
assert REGISTERED == [x.unsafe_buffer_pointer()]
assert jnp.allclose(mirror_and_shift(x), x + 1.0)
np.testing.assert_array_equal(MIRRORS["x"].numpy(), np.arange(4.0))
assert jnp.allclose(checked_square(x), x * x)
assert jnp.allclose(checked_square(x.reshape(2, 2)), (x * x).reshape(2, 2))
