# requires: multi-device
"""Tests that assert the very BufferError a sharded export raises: `pytest.raises`,
`assertRaises` as a block and as a call, `pytest.mark.xfail(raises=...)` and
`unittest.expectedFailure`. The error is the test's point: no finding, and no gather."""
import unittest

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((len(jax.devices()),), ("x",))


def sharded():
    return jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("x")))


def test_pytest_raises():
    x = sharded()
    with pytest.raises(BufferError, match="singular device"):
        torch.from_dlpack(x)


@pytest.mark.xfail(raises=BufferError, strict=True)
def test_xfail():
    x = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("x")))
    np.from_dlpack(x)


class ExportTest(unittest.TestCase):
    def test_block(self):
        x = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("x")))
        with self.assertRaisesRegex(Exception, "singular device"):
            x.__dlpack__()

    def test_call_form(self):
        x = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("x")))
        self.assertRaises(BufferError, torch.from_dlpack, x)

    def test_local_helper(self):
        x = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("x")))

        def export(value):
            return torch.from_dlpack(value)

        with self.assertRaises(BufferError):
            export(x)

    @unittest.expectedFailure
    def test_expected_failure(self):
        x = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("x")))
        torch.from_dlpack(x)
