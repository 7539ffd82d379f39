# execute: yes
"""`getattr(x, "sharding", None)` and `hasattr(x, "sharding")` on a tracer: the property JAX hides
from tracers raises AttributeError, which both catch (None, False). They trace fine."""
import jax
import jax.numpy as jnp

SEEN = []


@jax.jit
def placed(x):
    SEEN.append((getattr(x, "sharding", None), hasattr(x, "device"), getattr(x, "format", "none")))
    return x * 2.0


assert jnp.allclose(placed(jnp.arange(3.0)), jnp.arange(3.0) * 2.0)
assert SEEN == [(None, False, "none")]
