# expect: ConcretizationTypeError: unsafe_buffer_pointer
import jax
import jax.numpy as jnp

LOG = []


@jax.jit
def update(x, g):  # one optimizer step
    # Normalise the gradient, then take the step.

    # The native logger wants the input's address.
    LOG.append(x.unsafe_buffer_pointer())  # one entry per call
    norm = jnp.linalg.norm(g)
    # Clip by norm.
    return x - g / jnp.maximum(norm, 1.0)


x, g = jnp.zeros(2), jnp.array([3.0, 4.0])
assert jnp.allclose(update(x, g), -g / 5.0)
assert LOG == [x.unsafe_buffer_pointer()] and LOG[0] > 0
