import torch


class ToTorch:
    def __init__(self, dtype=torch.float32):
        self.dtype = dtype

    def __call__(self, x):
        return torch.from_dlpack(x).to(self.dtype)
