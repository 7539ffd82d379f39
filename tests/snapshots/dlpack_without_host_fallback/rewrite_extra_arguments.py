import jax.numpy as jnp
import numpy as np

x = jnp.arange(3)
# copy= and device= have no host-copy spelling this rule can vouch for.
a = np.from_dlpack(x, copy=True)
b = np.from_dlpack(x, device="cpu")
