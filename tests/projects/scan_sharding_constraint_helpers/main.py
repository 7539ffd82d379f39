import jax
import jax.numpy as jnp
import torch

from model.layout import constrain


def body(carry, x):
    return constrain(carry + x), carry.sum()


@jax.jit
def accumulate(init, xs):
    final, _ = jax.lax.scan(body, init, xs)
    return final


total = accumulate(jnp.zeros(8), jnp.ones((3, 8)))
tensor = torch.from_dlpack(total)
assert float(tensor.sum()) == 24.0
print("ok")
