"""A pointer into a temporary gathered copy would dangle: only variables are rebound."""
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.sharding.Mesh(jax.devices()[:4], ("x",))
x = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("x")))
address = (x + 1).unsafe_buffer_pointer()
later = lambda: x.unsafe_buffer_pointer()


def global_pointer():
    # Rebinding `x` here would make it local to the function.
    return x.unsafe_buffer_pointer()


if address: other = x.unsafe_buffer_pointer()
