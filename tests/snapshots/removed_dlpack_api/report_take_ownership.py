import jax
import jax.dlpack
import jax.numpy as jnp
import torch.utils.dlpack

x = jnp.ones(3)
# Buffer donation has no array-protocol equivalent: reported, not rewritten.
t = torch.utils.dlpack.from_dlpack(jax.dlpack.to_dlpack(x, take_ownership=True))
u = torch.utils.dlpack.from_dlpack(jax.dlpack.to_dlpack(x, True))


def jax_to_pytorch(x, take_ownership=False):
    return torch.utils.dlpack.from_dlpack(jax.dlpack.to_dlpack(x, take_ownership=take_ownership))


v = torch.utils.dlpack.from_dlpack(jax.dlpack.to_dlpack(x, src_device=jax.devices()[0]))
