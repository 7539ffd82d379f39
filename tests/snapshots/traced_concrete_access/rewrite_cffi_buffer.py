# expect: TypeError: bytes-like object is required
# requires: cffi
import cffi
import jax
import jax.numpy as jnp

ffi = cffi.FFI()
HANDLES = []


@jax.jit
def publish(x, y):
    # The C side reads the input through a cffi buffer.
    HANDLES.append(ffi.from_buffer("float[]", x))
    return x @ y


x, y = jnp.arange(4.0, dtype=jnp.float32), jnp.ones(4, dtype=jnp.float32)
assert jnp.allclose(publish(x, y), 6.0)
assert len(HANDLES) == 1 and HANDLES[0][3] == 3.0
