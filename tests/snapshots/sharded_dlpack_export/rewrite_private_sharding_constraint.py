# expect: BufferError: to_dlpack can only pack a dlpack tensor from an array on a singular device
# requires: multi-device
"""with_sharding_constraint imported from jax._src.pjit is jax.lax's (a module prefix would call
it `jax.with_sharding_constraint`, which names nothing): its result is sharded (issue 29)."""
import jax
import jax.numpy as jnp
import numpy as np
from jax._src.pjit import with_sharding_constraint
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()), ("x",))
sharding = NamedSharding(mesh, P("x"))
data = np.arange(8.0)

constrained = with_sharding_constraint(jnp.asarray(data), sharding)
assert np.array_equal(np.from_dlpack(constrained), data)
