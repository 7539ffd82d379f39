import torch

from .._backend import Backend


class TorchBackend(Backend):
    name = "torch"

    def is_tensor(self, x):
        return isinstance(x, torch.Tensor)

    def to_dlpack(self, tensor):
        from torch.utils import dlpack
        return dlpack.to_dlpack(tensor)

    def from_dlpack(self, capsule):
        from torch.utils import dlpack
        return dlpack.from_dlpack(capsule)
