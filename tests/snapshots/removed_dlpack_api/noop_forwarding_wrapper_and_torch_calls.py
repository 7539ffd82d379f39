# execute: yes
"""A backend's own `from_dlpack` forwards its argument to JAX; the torch calls of the same name
are torch's, not it, so a torch capsule handed to torch says nothing about what the wrapper
gets."""
import jax.dlpack
import torch
import torch.utils.dlpack


def from_dlpack(x):
    return jax.dlpack.from_dlpack(x)


class JaxBackend:
    def from_dlpack(self, x):
        return jax.dlpack.from_dlpack(x)


def torch_roundtrip(t):
    return torch.utils.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(t))


def torch_roundtrip_top(t):
    return torch.from_dlpack(torch.utils.dlpack.to_dlpack(t))


assert from_dlpack(torch.ones(2)).tolist() == [1.0, 1.0]
assert JaxBackend().from_dlpack(torch.zeros(1)).tolist() == [0.0]
assert torch_roundtrip(torch.ones(2)).tolist() == torch_roundtrip_top(torch.ones(2)).tolist() == [1.0, 1.0]
