"""A chain of helpers where only the last holds the access: the middle one has no access, no
decorator and no transform of its own, yet it runs inside the trace and hands the tracer on."""
import jax
import numpy as np


def _validate(slices):
    return slices.tolist()


def _update(cache, slices):
    _validate(slices)
    return cache


def _outer(cache, slices):
    return _update(cache, slices)


def _untouched(cache, count):
    _validate(np.arange(count))
    return cache


@jax.jit
def update(cache, slices):
    return _outer(cache, slices)


@jax.jit
def update_static(cache):
    return _untouched(cache, 3)
