# execute: yes
"""Old API only where it exists: version gates are not bugs."""
import jax
import jax.dlpack
import jax.numpy as jnp
import torch
import torch.utils.dlpack
from packaging import version

try:
    from jax.dlpack import to_dlpack as _legacy_to_dlpack
except ImportError:
    def _legacy_to_dlpack(x):
        return x.__dlpack__()

_to_dlpack = getattr(jax.dlpack, "to_dlpack", None)
JAX_VERSION = version.parse(jax.__version__)
HAS_LEGACY_DLPACK = hasattr(jax.dlpack, "to_dlpack")


def by_version(x):
    if version.parse(jax.__version__) < version.parse("0.7.0"):
        return torch.utils.dlpack.from_dlpack(jax.dlpack.to_dlpack(x))
    return torch.from_dlpack(x)


def by_version_info(x):
    if jax.__version_info__ >= (0, 7):
        return torch.from_dlpack(x)
    else:
        return torch.utils.dlpack.from_dlpack(jax.dlpack.to_dlpack(x))


def by_module_version(x):
    if JAX_VERSION >= version.parse("0.7"):
        return torch.from_dlpack(x)
    return torch.utils.dlpack.from_dlpack(jax.dlpack.to_dlpack(x))


def by_hasattr(x):
    if HAS_LEGACY_DLPACK:
        return torch.utils.dlpack.from_dlpack(jax.dlpack.to_dlpack(x))
    return torch.from_dlpack(x)


def by_getattr(x):
    if _to_dlpack is not None:
        return torch.utils.dlpack.from_dlpack(_to_dlpack(x))
    return torch.from_dlpack(x)


def by_try(x):
    try:
        return torch.utils.dlpack.from_dlpack(jax.dlpack.to_dlpack(x))
    except AttributeError:
        return torch.from_dlpack(x)


def from_torch(t):
    if version.parse(jax.__version__) < version.parse("0.7"):
        return jax.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(t))
    return jax.dlpack.from_dlpack(t.detach().contiguous())


for convert in (by_version, by_version_info, by_module_version, by_hasattr, by_getattr, by_try):
    assert convert(jnp.arange(3.0)).tolist() == [0.0, 1.0, 2.0], convert
assert torch.utils.dlpack.from_dlpack(_legacy_to_dlpack(jnp.ones(2))).tolist() == [1.0, 1.0]
assert from_torch(torch.ones(2)).tolist() == [1.0, 1.0]


def torch_to_jax_new_first(t):
    # The array protocol first, the capsule only where JAX's from_dlpack rejects a tensor.
    try:
        return jax.dlpack.from_dlpack(t)
    except TypeError:
        return jax.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(t))


assert torch_to_jax_new_first(torch.arange(3.0)).tolist() == [0.0, 1.0, 2.0]
