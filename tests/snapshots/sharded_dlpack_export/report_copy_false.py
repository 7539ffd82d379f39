"""copy=False forbids the copy a gather makes: reported, not rewritten."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.sharding.Mesh(jax.devices()[:4], ("x",))
x = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("x")))
view = np.from_dlpack(x, copy=False)
capsule = x.__dlpack__(copy=False)
