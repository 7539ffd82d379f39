import jax
import jax.numpy as jnp

from models.net import Net

model = Net(1.0)


@jax.jit
def forward(x):
    return Net(2.0)(x)


@jax.jit
def encode(x):
    net = Net(3.0)
    return net.encode(x)


@jax.jit
def shared(x):
    return model(x)


@jax.jit
def fine(x):
    return x * Net(4.0).shape_of(x)[0]


mapped = jax.vmap(model)  # the instance transformed: its `__call__` gets the tracers


assert float(fine(jnp.ones(3))[0]) == 3.0  # a method that reads only static facts traces fine
forward(jnp.arange(4.0))
