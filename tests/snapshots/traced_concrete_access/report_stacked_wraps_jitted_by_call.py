# expect: ConcretizationTypeError
"""A function under two stacked `functools.wraps` decorators, each a wrapper that calls it with
all of its arguments, jitted by a call (`jax.jit(scale)`): the trace runs the function as
written, so its `.item()` of a tracer raises (issue 54: the decorators hid it from the trace)."""
import functools

import jax
import jax.numpy as jnp

CALLS = []


def logged(function):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        CALLS.append(function.__name__)
        return function(*args, **kwargs)

    return wrapper


def timed(function):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        return function(*args, **kwargs)

    return wrapper


@logged
@timed
def scale(x):
    return x * x.sum().item()


fast = jax.jit(scale)
fast(jnp.arange(4.0))
