"""The jitted use outside the block is not expected to fail: still reported."""
import jax
import pytest


def test_item():
    def f(x):
        return x.item()

    jax.jit(f)(1.0)
    with pytest.raises(TypeError):
        jax.jit(f)(1.0)
