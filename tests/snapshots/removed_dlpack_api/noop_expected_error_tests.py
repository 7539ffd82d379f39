# requires: jax>=0.7.0
"""Tests that the removed API is gone: the AttributeError and ImportError they assert are the
point, and a migration would make them fail."""
import jax
import jax.numpy as jnp
import pytest


def test_to_dlpack_removed():
    with pytest.raises(AttributeError):
        jax.dlpack.to_dlpack(jnp.ones(3))


def test_import_removed():
    with pytest.raises(ImportError):
        from jax.dlpack import to_dlpack  # noqa: F401
