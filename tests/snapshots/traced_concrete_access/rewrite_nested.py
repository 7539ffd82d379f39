# expect: ConcretizationTypeError: unsafe_buffer_pointer
from jax import jit
import jax.numpy as jnp


def make_step(rate, sink):
    @jit
    def step(params, grads):
        sink.append(params.unsafe_buffer_pointer())
        return params - rate * grads

    return step


sink = []
step = make_step(0.5, sink)
params, grads = jnp.ones(4), jnp.arange(4.0)
out = step(params, grads)
assert jnp.allclose(out, params - 0.5 * grads)
assert sink == [params.unsafe_buffer_pointer()] and sink[0] > 0
