# expect: ConcretizationTypeError: unsafe_buffer_pointer
import jax
import jax.numpy as jnp

POINTERS = []


def register(pointer):
    POINTERS.append(pointer)


@jax.jit
def scale(x, factor):
    """Scale x by factor."""
    # The C extension needs the input's address.
    register(x.unsafe_buffer_pointer())
    return x * factor


x = jnp.arange(4.0)
out = scale(x, 3.0)
assert jnp.allclose(out, x * 3.0)
assert POINTERS == [x.unsafe_buffer_pointer()] and POINTERS[0] > 0
assert scale.__doc__ == "Scale x by factor."
