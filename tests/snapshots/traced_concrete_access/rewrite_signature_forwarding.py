# expect: ConcretizationTypeError: unsafe_buffer_pointer
import jax
import jax.numpy as jnp

CALLS = []


@jax.jit
def combine(x, /, y, *rest, scale, offset=None, **extra):
    CALLS.append([a.unsafe_buffer_pointer() for a in rest])
    CALLS.append(sorted(extra))
    total = x * scale + y
    for a in rest:
        total = total + a
    for value in extra.values():
        total = total * value
    return total if offset is None else total + offset


x, y, z = jnp.ones(2), jnp.arange(2.0), jnp.full(2, 5.0)
out = combine(x, y, z, z, scale=2.0, gain=jnp.float32(3.0))
assert jnp.allclose(out, (x * 2.0 + y + z + z) * 3.0)
assert CALLS == [[z.unsafe_buffer_pointer()] * 2, ["gain"]] and CALLS[0][0] > 0
assert jnp.allclose(combine(x, y, scale=1.0, offset=jnp.ones(2)), x + y + 1.0)
