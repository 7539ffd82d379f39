# expect: ConcretizationTypeError: unsafe_buffer_pointer
import jax.numpy as jnp
from jax import jit as compile_step

LOG = []


def log(*items):
    LOG.append(items)


@compile_step
def step(x, y):
    ptr = x.unsafe_buffer_pointer()
    size = x.on_device_size_in_bytes()
    # Both go to the same log line.
    log("step", ptr, size)
    log("replicated", y.is_fully_replicated)  # trailing comment stays too
    z = x + 2.0 * y
    return jnp.tanh(z)


x = jnp.arange(6.0)
y = jnp.ones(6)
out = step(x, y)
assert jnp.allclose(out, jnp.tanh(x + 2.0 * y))
assert LOG[0] == ("step", x.unsafe_buffer_pointer(), x.on_device_size_in_bytes())
assert LOG[0][1] > 0 and LOG[0][2] > 0
assert LOG[1] == ("replicated", True)
