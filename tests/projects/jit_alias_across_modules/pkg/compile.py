"""The project's one spelling of the compiler."""

import functools

import jax

compiled = functools.partial(jax.jit, static_argnames=("n",))
