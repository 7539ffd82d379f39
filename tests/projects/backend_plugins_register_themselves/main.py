import jax.numpy as jnp
import numpy as np
import torch

from mini.core import convert
from mini.jaxb import JAX
from mini.torchb import TORCH

values = np.arange(6, dtype=np.float32).reshape(2, 3)

# JAX -> torch: the JAX backend's to_dlpack (JAX005) -> the torch backend's from_dlpack.
np.testing.assert_array_equal(convert(jnp.asarray(values), TORCH).numpy(), values)

# torch -> JAX: the torch backend's capsule reaches the JAX backend's from_dlpack through convert().
np.testing.assert_array_equal(np.asarray(convert(torch.from_numpy(values.copy()), JAX)), values)
print("ok")
