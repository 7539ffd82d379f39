# expect: BufferError: __dlpack__ only supported for unsharded arrays
# requires: multi-device
"""The seed's example: a pjit function's result handed to torch."""
import jax.numpy as jnp
import numpy as np
import torch
from jax.experimental.pjit import pjit
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
import jax

mesh = Mesh(np.array(jax.devices()), ("x",))
pjit_fn = pjit(jnp.sin, in_shardings=NamedSharding(mesh, P("x")), out_shardings=NamedSharding(mesh, P("x")))

inputs = jnp.linspace(0.0, 1.0, 8)
x = pjit_fn(inputs)
t = torch.from_dlpack(x)
assert torch.allclose(t, torch.sin(torch.linspace(0.0, 1.0, 8)))
