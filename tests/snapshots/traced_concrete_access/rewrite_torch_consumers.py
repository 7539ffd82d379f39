# expect: AttributeError: __dlpack_device__
import jax
import jax.numpy as jnp
import torch

MIRRORS = {}


@jax.jit
def mirror_and_step(x, lr):
    # PyTorch keeps its own view of the input for the optimizer's bookkeeping.
    MIRRORS["as_tensor"] = torch.as_tensor(x)
    MIRRORS["copy"] = torch.tensor(x)
    MIRRORS["asarray"] = torch.asarray(x)
    return x - lr * jnp.sign(x)


x = jnp.array([1.0, -2.0, 3.0])
out = mirror_and_step(x, 0.5)
assert jnp.allclose(out, jnp.array([0.5, -1.5, 2.5]))
for name in ("as_tensor", "copy", "asarray"):
    assert torch.equal(MIRRORS[name], torch.tensor([1.0, -2.0, 3.0])), name
