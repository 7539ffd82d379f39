# expect: AttributeError: __dlpack_device__
import jax
import jax.numpy as jnp
import numpy as np
import torch

EXPORTED = {}


@jax.jit
def export_and_square(x):
    EXPORTED["torch"] = torch.from_dlpack(x)
    EXPORTED["numpy"] = np.asarray(x)
    EXPORTED["capsule"] = x.__dlpack__()
    EXPORTED["devices"] = x.devices()
    EXPORTED["shards"] = len(x.addressable_shards)
    EXPORTED["traceback"] = x.traceback
    return x * x


x = jnp.arange(4.0)
assert jnp.allclose(export_and_square(x), x * x)
if jax.default_backend() == "cpu":  # zero-copy where JAX exports (on a TPU: a host copy)
    assert EXPORTED["torch"].data_ptr() == x.unsafe_buffer_pointer() > 0
assert np.array_equal(EXPORTED["numpy"], np.arange(4.0))
assert EXPORTED["devices"] == x.devices()
assert EXPORTED["shards"] == 1
