# requires: multi-device
"""A block that expects another error (ValueError, not BufferError): the export is still
reported, but nothing inside the block is edited, since a gather there changes what the
test asserts."""
import jax
import jax.numpy as jnp
import pytest
import torch
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((len(jax.devices()),), ("x",))


def test_wrong_error():
    x = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("x")))
    with pytest.raises(ValueError):
        torch.from_dlpack(x)
