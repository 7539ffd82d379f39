# expect: ConcretizationTypeError: concrete value
"""Tests that do not show the value is concrete where the access runs: the branch taken for a
tracer, a test of classes one of which a tracer is (`jax.Array`), the code after an exit whose
test holds for only some tracers (`and`), a value bound again inside the guarded block, and a
loop inside the guard that binds the value again after the access (a later pass reads what the
last one bound). Each raises inside `jax.jit`, and is reported."""
import jax
import jax.numpy as jnp
import numpy as np
from jax import core


def double(x):
    return x * 2


@jax.jit
def tracer_branch(x):
    if isinstance(x, core.Tracer):
        return x.item()
    return x


@jax.jit
def array_class(x):
    if isinstance(x, (np.ndarray, jax.Array)):  # a tracer is a jax.Array
        return x.item()
    return x


@jax.jit
def partial_exit(x):
    if isinstance(x, core.Tracer) and x.ndim:
        return x
    return x.item()


def rebound(x, y):
    if not isinstance(y, core.Tracer):
        y = double(x)
        return y.item()
    return y


def loop_inside_guard(x, y, n):
    if not isinstance(y, core.Tracer):
        for _ in range(n):
            print(y.item())
            y = double(x)
    return y


# `y` static: a concrete value passes the test, and what the block binds is a tracer.
rebound_jit = jax.jit(rebound, static_argnums=1)
loop_jit = jax.jit(loop_inside_guard, static_argnums=(1, 2))

partial_exit(jnp.float32(3.0))
