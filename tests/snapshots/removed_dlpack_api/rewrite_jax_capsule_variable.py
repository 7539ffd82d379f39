# expect: AttributeError: to_dlpack
# fails-on: jax>=0.7.0
"""JAX -> torch through a variable: the variable is dropped when it only carries the capsule."""
import jax
import jax.dlpack
import jax.numpy as jnp
from torch.utils.dlpack import from_dlpack


def jax2torch(x):
    x = jax.dlpack.to_dlpack(x, take_ownership=False)
    x = from_dlpack(x)
    return x


class Bridge:
    def __init__(self, value):
        self.value = value

    def export(self):
        capsule = jax.dlpack.to_dlpack(self.value)
        return from_dlpack(capsule)

    def export_scaled(self, scale):
        # an expression cannot move past other statements: the variable keeps the array instead
        capsule = jax.dlpack.to_dlpack(self.value * scale)
        scale = None
        return from_dlpack(capsule)


assert jax2torch(jnp.arange(3.0)).tolist() == [0.0, 1.0, 2.0]
bridge = Bridge(jnp.ones((2, 2)))
assert bridge.export().sum().item() == 4.0
assert bridge.export_scaled(3.0).sum().item() == 12.0
