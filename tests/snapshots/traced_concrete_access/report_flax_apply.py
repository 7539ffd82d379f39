# expect: TracerArrayConversionError: numpy.ndarray
"""flax linen's `model.apply(variables, x)` runs the Module's `__call__(x)` (with `method=`, the
method it names, by attribute or by name), so inside `jax.jit` that method gets the tracer: a
host conversion there raises. Reported in the method, naming the traced function; not fixed."""
import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np


class Encoder(nn.Module):
    features: int = 4

    @nn.compact
    def __call__(self, x):
        return nn.Dense(self.features)(x) * np.asarray(x).std()

    def embed(self, x):
        return jnp.asarray(np.asarray(x))

    def pointer(self, x):
        return x.unsafe_buffer_pointer()


model = Encoder()


@jax.jit
def forward(variables, x):
    return model.apply(variables, x)


@jax.jit
def embed(variables, x):
    return Encoder(features=2).apply(variables, x, method=Encoder.embed)


@jax.jit
def pointer(variables, x):
    return model.apply(variables, x, method="pointer", mutable=False)


variables = model.init(jax.random.key(0), jnp.ones((1, 3)))
forward(variables, jnp.ones((1, 3)))
