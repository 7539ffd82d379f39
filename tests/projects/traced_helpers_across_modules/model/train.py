from functools import partial

import jax
import jax.numpy as jnp

from util import to_host
from util.host import HostMixin, Recorder, normalize, scaled_host, summarize

recorder = Recorder()
# Another module's function transformed here as it is.
compiled_host = jax.jit(to_host)


@jax.jit
def step(x):
    y = x * 2
    host = to_host(y)
    return y + 1, host


def total(x):
    return summarize(x)


@jax.jit
def logged(x):
    return recorder.record(x + 1)


class Model(HostMixin):
    @partial(jax.jit, static_argnums=0)
    def forward(self, x):
        return self.host_copy(x * 3)


def run(which):
    x = jnp.arange(4.0)
    if which == "step":
        return step(x)
    if which == "total":
        return jax.jit(total)(x)
    if which == "logged":
        return logged(x)
    if which == "compiled":
        return compiled_host(x)
    if which == "mapped":
        return jax.vmap(summarize)(x.reshape(2, 2))
    if which == "tree":
        return leaves_to_host({"x": x})
    if which == "alias":
        return scaled_twice(x)
    if which == "normalized":
        return normalized_host(x)
    if which == "partial":
        # The scale is bound (a constant); the array the jitted partial gets is a tracer.
        return jax.jit(partial(scaled_host, scale=2.0))(x)
    return Model().forward(x)


@jax.jit
def leaves_to_host(tree):
    # Another module's function mapped over the leaves of a traced tree.
    return jax.tree.map(to_host, tree)


# A keyword-only partial of another module's function, called inside a trace.
double_host = partial(scaled_host, scale=2.0)


@jax.jit
def scaled_twice(x):
    return double_host(x)


@jax.jit
def normalized_host(x):
    # Another module's helper returns a tracer, handed to a helper that reads it.
    return to_host(normalize(x))
