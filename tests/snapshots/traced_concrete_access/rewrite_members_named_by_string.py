# expect: ConcretizationTypeError: is_fully_replicated
"""Concrete-only members read through `getattr`/`hasattr` with the name as a string: a property's
ConcretizationTypeError is no AttributeError, so neither a default nor hasattr catches it."""
import jax
import jax.numpy as jnp

CHECKED = []


@jax.jit
def scaled(x):
    assert getattr(x, "is_fully_replicated", True), "replicate x first"
    return x * 2.0


@jax.jit
def shifted(x):
    CHECKED.append(hasattr(x, "committed"))
    return x + 1.0


@jax.jit
def rounded(x):
    CHECKED.append(getattr(x, "tolist")())
    return jnp.round(x)


x = jnp.arange(3.0)
assert jnp.allclose(scaled(x), x * 2.0)
assert jnp.allclose(shifted(x), x + 1.0)
assert jnp.allclose(rounded(x), x)
assert CHECKED == [hasattr(x, "committed"), [0.0, 1.0, 2.0]]  # a concrete array has `committed` from 0.4.31
