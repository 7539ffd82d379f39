import jax.dlpack
import jax.numpy as jnp
import torch.utils.dlpack

x = jnp.ones(3)
# Buffer donation has no array-protocol equivalent: reported, not rewritten.
t = torch.utils.dlpack.from_dlpack(jax.dlpack.to_dlpack(x, take_ownership=True))
u = torch.utils.dlpack.from_dlpack(jax.dlpack.to_dlpack(x, True))
