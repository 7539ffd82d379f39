from .jax_backend import JaxBackend
from .pytorch_backend import PyTorchBackend

_BACKENDS = {"jax": JaxBackend(), "pytorch": PyTorchBackend()}


def get_backend(name):
    return _BACKENDS[name]
