"""JAX 0.4.38's own `jax.nn._one_hot`: `x.sharding` on a tracer only where the
`sharding_in_types` flag is on, under which the abstract value carries the sharding and the
tracer answers from it (its property raises AttributeError, `Tracer.__getattr__` reads the
aval). The branch is judged by what it does when taken: it works."""
from functools import partial

import jax
import jax.numpy as jnp
from jax._src import config
from jax.sharding import NamedSharding, PartitionSpec as P


@partial(jax.jit, static_argnames=("num_classes",))
def one_hot(x, num_classes):
    x_arr = jnp.asarray(x)
    if config.sharding_in_types.value:
        sharding = NamedSharding(x_arr.sharding.mesh, P(None, None))
    else:
        sharding = None
    return x_arr, sharding
