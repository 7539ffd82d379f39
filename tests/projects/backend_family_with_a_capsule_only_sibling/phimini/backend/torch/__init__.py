from ._torch_backend import TorchBackend

TORCH = TorchBackend()
