"""Arrays made from host data or another library's array sit on one device: JAX's test
generators (`jtu.rand_default(...)` returns NumPy arrays) and a torch tensor through `jnp.array`."""
import jax.numpy as jnp
import numpy as np
import torch
from jax._src import test_util as jtu


class Interop(jtu.JaxTestCase):
    def test_jax_to_numpy(self):
        rng = jtu.rand_default(self.rng())
        x = jnp.array(rng((3,), np.float32))
        self.assertAllClose(np.from_dlpack(x), x)

    def test_round_trip(self):
        y = jnp.array(torch.arange(3.0))
        z = jnp.asarray(torch.ones(2))
        return torch.from_dlpack(y), z.__dlpack__()
