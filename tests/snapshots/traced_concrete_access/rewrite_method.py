# expect: ConcretizationTypeError: unsafe_buffer_pointer
from functools import partial

import jax
import jax.numpy as jnp


class Kernel:
    def __init__(self, weight):
        self.weight = weight
        self.pointers = []

    @partial(jax.jit, static_argnums=0)
    def __call__(self, x):
        self.pointers.append(x.unsafe_buffer_pointer())
        return x * self.weight

    @partial(jax.jit, static_argnums=0)
    def _apply(self, x, bias=None):
        # Private methods split the same way.
        self.pointers.append(x.unsafe_buffer_pointer())
        return x * self.weight if bias is None else x * self.weight + bias


kernel = Kernel(3.0)
x = jnp.arange(3.0)
assert jnp.allclose(kernel(x), x * 3.0)
assert jnp.allclose(kernel._apply(x), x * 3.0)
assert jnp.allclose(kernel._apply(x, bias=jnp.ones(3)), x * 3.0 + 1.0)
assert kernel.pointers == [x.unsafe_buffer_pointer()] * 3 and kernel.pointers[0] > 0
