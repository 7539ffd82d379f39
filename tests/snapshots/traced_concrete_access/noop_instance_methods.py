"""Methods of the file's classes that a traced function calls, where nothing concrete is read
of a tracer: a method given only static values, one that reads static facts (`x.shape`), a class
whose own `apply` (not flax's) does array math, a flax Module applied with a method chosen at run
time (what runs is not known here), and an instance method called outside any trace."""
import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np


class Shapes:
    def __call__(self, x):
        return x.shape[0]

    def host(self, n):
        return np.asarray(n) + 1


class Own:
    def apply(self, variables, x):
        return x * variables

    def __call__(self, x):
        return np.asarray(x)


class Encoder(nn.Module):
    def __call__(self, x):
        return np.asarray(x)


@jax.jit
def rows(x):
    return x * Shapes()(x) + Shapes().host(3)


@jax.jit
def scaled(x):
    return Own().apply(2.0, x)


def chosen(variables, x, method):
    return jax.jit(lambda v, y: Encoder().apply(v, y, method=method))(variables, x)


def on_host(x):
    return Shapes().host(x)


print(rows(jnp.ones(3)), scaled(jnp.ones(3)), on_host(np.ones(3)))


class Sized:
    def __call__(self, x):
        return np.asarray(x) + 1


sized = jax.jit(Sized(), static_argnums=0)
