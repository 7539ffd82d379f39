import equinox as eqx
import flax.linen as nn
import jax.numpy as jnp
from flax import nnx


def log(value):
    print(value)


class Block(nn.Module):
    features: int

    @nn.jit
    @nn.compact
    def __call__(self, x):
        log(x.unsafe_buffer_pointer())
        return nn.Dense(self.features)(x)


@eqx.filter_vmap
def per_example(model, x):
    log(x.unsafe_buffer_pointer())
    return model(x)


@eqx.filter_grad
def loss(model, x):
    log(model.weight.devices())
    return jnp.sum(model(x))


@nnx.vmap(in_axes=(None, 0))
def apply(model, x):
    log(x.tolist())
    return model(x)
