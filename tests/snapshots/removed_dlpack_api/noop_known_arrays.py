# execute: yes
"""Values fed to JAX's DLPack consumers that the file shows are arrays, not capsules: an
annotation, a tensor method's result, a guard, or a use a capsule would not survive
(`.shape`, `.device`, indexing). Real bridges written for the array protocol stay silent."""
import jax
import jax.dlpack
import jax.numpy as jnp
import numpy as np
import torch


def torch_to_jax(t: torch.Tensor) -> jax.Array:
    return jax.dlpack.from_dlpack(t.detach().contiguous())


def tree_t2j(*tensors: torch.Tensor):
    return [jnp.from_dlpack(t.contiguous()) for t in tensors]


def numpy_to_jax(a: np.ndarray):
    return jax.dlpack.from_dlpack(a)


def to_backend(value):
    if torch.is_tensor(value):
        tensor = value.detach().contiguous()
        return jax.dlpack.from_dlpack(tensor)
    if hasattr(value, "__dlpack__"):
        return jax.dlpack.from_dlpack(value)
    return jnp.asarray(value)


def strict_to_jax(x):
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"Expected torch.Tensor, got {type(x)}")
    return jax.dlpack.from_dlpack(x.contiguous())


def float32_to_jax(tensor):
    if tensor.dtype != torch.float32:
        raise TypeError(f"Expected a float32 Torch tensor, got {tensor.dtype}")
    if not tensor.is_contiguous():
        tensor = tensor.contiguous()
    return jax.dlpack.from_dlpack(tensor)


def borrow(tensor):
    array = jax.dlpack.from_dlpack(tensor)
    assert str(tensor.device) == "cpu"
    return array


def from_dlpack(x, *, device=None, copy=None):
    # a consumer of its own, with jax.dlpack.from_dlpack's contract (as jnp.from_dlpack is)
    return jax.dlpack.from_dlpack(x, device=device, copy=copy)


base = torch.arange(6.0).reshape(2, 3)
assert torch_to_jax(base.T).tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
assert [a.tolist() for a in tree_t2j(base[0], base[1])] == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
assert numpy_to_jax(np.ones(2)).tolist() == [1.0, 1.0]
assert to_backend(base).tolist() == base.tolist()
assert to_backend(np.zeros(1)).tolist() == [0.0]
assert to_backend([1.0]).tolist() == [1.0]
assert strict_to_jax(base.T).tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
assert float32_to_jax(base.T).tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
assert borrow(base).tolist() == base.tolist()
assert from_dlpack(np.ones(3)).tolist() == [1.0, 1.0, 1.0]
