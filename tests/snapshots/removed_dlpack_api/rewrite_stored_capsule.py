# expect: AttributeError: to_dlpack
# fails-on: jax>=0.7.0
import jax
import jax.numpy as jnp
import torch.utils.dlpack

x = jnp.arange(4.0)
capsule = jax.dlpack.to_dlpack(x, stream=None)
t = torch.utils.dlpack.from_dlpack(capsule)
doubled = torch.utils.dlpack.from_dlpack(jax.dlpack.to_dlpack(x * 2) if True else None)
assert t.tolist() == [0.0, 1.0, 2.0, 3.0]
assert doubled.tolist() == [0.0, 2.0, 4.0, 6.0]
