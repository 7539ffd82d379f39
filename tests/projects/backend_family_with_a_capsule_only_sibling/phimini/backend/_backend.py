# The registry: a backend is imported the first time it is asked for, and `convert` moves a
# tensor from the backend that owns it to another one through DLPack, as PhiML's does.
class Backend:
    name = "base"

    def is_tensor(self, x):
        raise NotImplementedError

    def to_dlpack(self, tensor):
        raise NotImplementedError

    def from_dlpack(self, capsule):
        raise NotImplementedError


def get_backend(name):
    if name == "jax":
        from .jax import JAX

        return JAX
    if name == "torch":
        from .torch import TORCH

        return TORCH
    if name == "tensorflow":
        from .tensorflow import TENSORFLOW

        return TENSORFLOW
    raise ValueError(name)


def choose_backend(tensor):
    for name in ("jax", "torch"):
        backend = get_backend(name)
        if backend.is_tensor(tensor):
            return backend
    raise ValueError(f"no backend for {type(tensor)}")


def convert(tensor, backend):
    current_backend = choose_backend(tensor)
    if current_backend is backend:
        return tensor
    capsule = current_backend.to_dlpack(tensor)
    return backend.from_dlpack(capsule)
