# expect: AttributeError: to_dlpack
# fails-on: jax>=0.7.0
"""A `to_dlpack` method whose class has no `from_dlpack` sibling feeding JAX: its callers
may need a capsule, so it keeps returning one (the array protocol's)."""
import jax
import jax.dlpack
import jax.numpy as jnp
import torch


class Exporter:
    def to_dlpack(self, array):
        return jax.dlpack.to_dlpack(array)

    def from_dlpack(self, capsule):
        return torch.utils.dlpack.from_dlpack(capsule)


exporter = Exporter()
assert exporter.from_dlpack(exporter.to_dlpack(jnp.arange(3.0))).tolist() == [0.0, 1.0, 2.0]
