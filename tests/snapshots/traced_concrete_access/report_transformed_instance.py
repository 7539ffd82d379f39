# expect: TracerArrayConversionError: numpy.ndarray
"""A transform applied to an instance of the file's class (`jax.vmap(scorer)`, `jax.jit(Scorer())`,
an instance made in the calling function) traces its `__call__` with the arguments the
transformed callable gets: a host conversion there raises. Reported in `__call__`; not fixed
(it is transformed by a call). Static arguments (`static_argnums=0`, counted as the call's) are
concrete."""
import jax
import jax.numpy as jnp
import numpy as np


class Scorer:
    def __call__(self, x):
        return jnp.asarray(np.asarray(x).sum())


scorer = Scorer()
batched = jax.vmap(scorer)
jitted = jax.jit(Scorer())
static = jax.jit(Scorer(), static_argnums=0)


def run(xs):
    local = Scorer()
    return jax.vmap(local)(xs)


run(jnp.ones((2, 3)))
