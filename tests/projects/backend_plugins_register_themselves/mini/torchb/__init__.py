from ..core import BACKENDS
from ._torch_backend import TorchBackend

TORCH = TorchBackend()
BACKENDS.append(TORCH)
