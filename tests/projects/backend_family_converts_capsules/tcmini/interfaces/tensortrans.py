# From tensorcircuit/interfaces/tensortrans.py:28-42, 72-73, 122-141: the capsule made by one
# backend module crosses this module into the other backend module's from_dlpack.
from ..backends import get_backend

module2backend = {"jax": "jax", "jaxlib": "jax", "torch": "pytorch"}


def which_backend(a):
    return get_backend(module2backend[type(a).__module__.split(".")[0]])


def tensor_to_dlpack(t):
    return which_backend(t).to_dlpack(t)


def general_args_to_backend(args, target_backend="jax"):
    caps = [tensor_to_dlpack(a) for a in args]
    target = get_backend(target_backend)
    return [target.from_dlpack(c) for c in caps]
