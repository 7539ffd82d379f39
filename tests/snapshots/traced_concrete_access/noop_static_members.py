# execute: yes
# requires: equinox
import functools

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

FLAG = True


@jax.jit
def first_positive(x):
    # `size=` gives nonzero a static shape: it traces.
    (index,) = jnp.nonzero(x > 0, size=1)
    (again,) = (x > 0).nonzero(size=1)
    return index + again


@functools.partial(jax.jit, static_argnames=("template", "table"))
def labelled(x, template, table):
    # Static arguments are concrete Python values.
    label = template.format(int(np.asarray(table).sum()))
    return x + len(label)


def maybe_jit(fun):
    # Not a transform on every path: nothing it decorates is known to be traced.
    if FLAG:
        return jax.jit(fun)
    return fun


@maybe_jit
def unknown(x):
    return x * 2


@eqx.filter_jit
def scaled(x, factor=2):
    # A Python int under filter_jit is static, not traced.
    return x * np.asarray(factor).item()


x = jnp.array([-1.0, 2.0, 3.0])
assert int(first_positive(x)[0]) == 2
assert jnp.allclose(labelled(x, "n={}", (1, 2)), x + 3)
assert jnp.allclose(unknown(x), x * 2)
assert jnp.allclose(scaled(x), x * 2)
