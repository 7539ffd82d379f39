# execute: yes
"""The pair as the maintainers fixed it: `to_dlpack` returns the array, so `from_dlpack`'s
parameter holds one, whatever its name says; the class that keeps a real capsule for torch is
left alone, and a lone `from_dlpack` forwarding wrapper is a consumer of its own."""
import jax
import jax.dlpack
import jax.numpy as jnp
import numpy as np
import torch


class JaxBackend:
    def to_dlpack(self, tensor):
        return tensor

    def from_dlpack(self, capsule):
        return jax.dlpack.from_dlpack(capsule)


class TorchBackend:
    def to_dlpack(self, tensor):
        return torch.utils.dlpack.to_dlpack(tensor)

    def from_dlpack(self, capsule):
        return torch.utils.dlpack.from_dlpack(capsule)


jaxb, torchb = JaxBackend(), TorchBackend()
x = jnp.arange(3.0)
np.testing.assert_array_equal(np.asarray(jaxb.from_dlpack(jaxb.to_dlpack(x))), np.arange(3.0))
t = torch.arange(3.0)
assert torch.equal(torchb.from_dlpack(torchb.to_dlpack(t)), t)
