# execute: yes
"""Helpers whose return values are no tracers, though a tracer goes in: shapes, lengths, dtypes,
ranks, `isinstance` answers, constants, values computed from parameters no tracer is passed to
(a module constant, a default), and a recursive helper that ends on a shape. Handing those to
code that needs a concrete value is fine inside a trace: nothing is reported."""
import jax
import jax.numpy as jnp
import numpy as np

TABLE = np.ones(3)
LOG = []


def rows(x):
    return x.shape[0]


def count(x):
    return len(x)


def kind(x):
    return x.dtype


def rank(x):
    return x.ndim


def is_array(x):
    return isinstance(x, jax.Array)


def epsilon(x):
    return 1e-6


def lookup(x, table):
    return table * 2


def scale_of(x, scale=None):
    return scale


def last_dim(x, depth):
    if depth == 0:
        return x.shape[-1]
    return last_dim(x, depth - 1)


def to_host(value):
    return np.asarray(value)


class Shapes:
    def width(self, x):
        return x.shape[-1]

    def run(self, x):
        return jax.jit(self.traced)(x)

    def traced(self, x):
        LOG.append(to_host(self.width(x)))
        return x


@jax.jit
def step(x):
    LOG.append(to_host(rows(x)))
    LOG.append(to_host(count(x)))
    LOG.append(to_host(kind(x)))
    LOG.append(to_host(rank(x)))
    LOG.append(to_host(is_array(x)))
    LOG.append(to_host(epsilon(x)))
    LOG.append(to_host(lookup(x, TABLE)))
    LOG.append(to_host(scale_of(x)))
    LOG.append(to_host(last_dim(x, 2)))
    LOG.append(np.asarray(rows(x)) + np.asarray(lookup(x, table=TABLE)).sum())
    return x * 2


x = jnp.arange(4.0)
assert jnp.allclose(step(x), x * 2)
assert jnp.allclose(Shapes().run(x), x)
assert len(LOG) == 11


@jax.jit
def static_stats(x):
    # Shapes in a dict or a comprehension are Python values, not tracers.
    stats = {"n": x.shape[0], "dims": [d for d in x.shape]}
    return x * np.asarray(stats["dims"]).prod()


assert static_stats(jnp.ones((2, 3))).tolist() == [[6.0] * 3] * 2
