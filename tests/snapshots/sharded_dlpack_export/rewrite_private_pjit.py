# expect: BufferError: __dlpack__ only supported for unsharded arrays
# requires: multi-device
"""pjit imported from its private module (as JAX's own code does) is pjit: its sharded result
handed to torch is an export of a multi-device array (issue 29: the one resolver)."""
import jax.numpy as jnp
import numpy as np
import torch
from jax._src.pjit import pjit  # JAX's own modules import it so
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
import jax

mesh = Mesh(np.array(jax.devices()), ("x",))
pjit_fn = pjit(jnp.sin, in_shardings=NamedSharding(mesh, P("x")), out_shardings=NamedSharding(mesh, P("x")))

inputs = jnp.linspace(0.0, 1.0, 8)
x = pjit_fn(inputs)
t = torch.from_dlpack(x)
assert torch.allclose(t, torch.sin(torch.linspace(0.0, 1.0, 8)))
