# expect: ConcretizationTypeError: unsafe_buffer_pointer
import jax
import jax.numpy as jnp

POINTERS = []


@jax.jit
def shift(x, amount=1.0):
    POINTERS.append(x.unsafe_buffer_pointer())
    return x + amount


x = jnp.arange(3.0)
assert jnp.allclose(shift(x), x + 1.0)
assert jnp.allclose(shift(x, 2.0), x + 2.0)
assert POINTERS == [x.unsafe_buffer_pointer()] * 2 and POINTERS[0] > 0
