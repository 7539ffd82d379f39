# expect: TypeError: __dlpack__
# fails-on: jax>=0.7.2
# requires: torch
"""A backend registry (PhiML's phiml/backend shape, in one module) whose torch backend imports
torch's DLPack module by its last name inside each method (`from torch.utils import dlpack`),
so its export is spelled `dlpack.to_dlpack(tensor)`. That is still torch's capsule, which the
dispatcher hands to the JAX backend's `from_dlpack` and JAX 0.7.2+ refuses: fixed as a torch
capsule is, whatever the file calls the module (it becomes a torch tensor first; unsafe: that
path now needs torch where the capsule arrives)."""
import jax.numpy as jnp
import numpy as np
import torch


class JaxBackend:
    def to_dlpack(self, array):
        return array

    def from_dlpack(self, value):
        from jax import dlpack

        return dlpack.from_dlpack(value)


class TorchBackend:
    def to_dlpack(self, tensor):
        from torch.utils import dlpack

        return dlpack.to_dlpack(tensor)

    def from_dlpack(self, value):
        from torch.utils import dlpack

        return dlpack.from_dlpack(value)


def convert(tensor, source, target):
    capsule = source.to_dlpack(tensor)
    return target.from_dlpack(capsule)


values = np.arange(6.0, dtype=np.float32).reshape(2, 3)
moved = convert(torch.from_numpy(values.copy()).t(), TorchBackend(), JaxBackend())
np.testing.assert_array_equal(np.asarray(moved), values.T)
np.testing.assert_array_equal(convert(jnp.asarray(values), JaxBackend(), TorchBackend()).numpy(), values)
