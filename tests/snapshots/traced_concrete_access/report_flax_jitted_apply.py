# expect: TracerArrayConversionError: numpy.ndarray
"""`jax.jit(model.apply)`: flax's `apply` runs the Module's `__call__` with every argument but
the variables, so under that jit all of them are tracers and a host conversion in `__call__`
raises when the jitted function is first called. Reported in `__call__`; not fixed (the
function is jitted by a call). With options (`static_argnums=1`), which name apply's positions
rather than `__call__`'s, it is not followed."""
import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np


class Encoder(nn.Module):
    @nn.compact
    def __call__(self, x):
        return nn.Dense(2)(x) * np.asarray(x).std()


model = Encoder()
apply_fn = jax.jit(model.apply)

variables = model.init(jax.random.key(0), jnp.ones((1, 3)))
apply_fn(variables, jnp.ones((1, 3)))
