# expect: ConcretizationTypeError: on_device_size_in_bytes
import functools

import jax
import jax.numpy as jnp

MEMORY = []


def jit(fun=None, **kwargs):
    """`@jit` and `@jit(static_argnames=...)`, like the project's other entry points."""
    if fun is None:
        return functools.partial(jax.jit, **kwargs)
    return jax.jit(fun, **kwargs)


def compile_with(static_argnums=()):
    def decorator(fn):
        return jax.jit(fn, static_argnums=static_argnums)

    return decorator


@jit
def mean(x):
    MEMORY.append(x.on_device_size_in_bytes())
    return jnp.mean(x)


@jit(static_argnames="axis")
def total(x, axis):
    MEMORY.append(x.on_device_size_in_bytes())
    return jnp.sum(x, axis=axis)


@compile_with(static_argnums=1)
def top(x, k):
    MEMORY.append(x.on_device_size_in_bytes())
    return jnp.sort(x)[-k:]


x = jnp.arange(6.0)
assert jnp.allclose(mean(x), 2.5)
assert jnp.allclose(total(x.reshape(2, 3), 0), jnp.array([3.0, 5.0, 7.0]))
assert jnp.allclose(top(x, 2), jnp.array([4.0, 5.0]))
# mean and top read x itself; total its (2, 3) reshape, which a TPU lays out with padding.
assert MEMORY[0] == MEMORY[2] == x.on_device_size_in_bytes() > 0 and len(MEMORY) == 3 and MEMORY[1] > 0
