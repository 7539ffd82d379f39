# From tensorcircuit/backends/pytorch_backend.py:449-453: this backend's to_dlpack returns a
# torch DLPack capsule, which the jax backend's from_dlpack is then handed.
import torch


class PyTorchBackend:
    name = "pytorch"

    def from_dlpack(self, a):
        return torch.utils.dlpack.from_dlpack(a)

    def to_dlpack(self, a):
        return torch.utils.dlpack.to_dlpack(a)
