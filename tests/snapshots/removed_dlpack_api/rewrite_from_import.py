# expect: ImportError: to_dlpack
# fails-on: jax>=0.7.0
import jax.numpy as jnp
import torch
from jax.dlpack import from_dlpack, to_dlpack

x = jnp.linspace(0.0, 1.0, 5)
t = torch.from_dlpack(to_dlpack(x))
back = from_dlpack(t)
assert jnp.array_equal(back, x)
