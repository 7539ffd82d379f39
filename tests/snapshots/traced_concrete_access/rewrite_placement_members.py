# expect: ConcretizationTypeError: committed
# requires: jax>=0.6.2
import jax
import jax.numpy as jnp

PLACEMENT = {}


@jax.jit
def shift(x, offset):
    # `committed`, `device` and `format` describe the concrete buffer.
    PLACEMENT["committed"] = x.committed
    PLACEMENT["device"] = x.device
    PLACEMENT["format"] = x.format
    return x + offset


x = jax.device_put(jnp.arange(3.0), jax.devices()[0])
assert jnp.allclose(shift(x, 1.0), x + 1.0)
assert PLACEMENT["committed"] is True
assert PLACEMENT["device"] == jax.devices()[0]
assert PLACEMENT["format"] is not None
