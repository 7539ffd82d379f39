import jax.numpy as jnp
import numpy as np
import torch

from phimini.backend import convert, get_backend

values = np.arange(6, dtype=np.float32).reshape(2, 3)

# JAX -> torch: the JAX backend's to_dlpack (JAX005; --unsafe-fixes returns the array) -> torch's from_dlpack.
t = convert(jnp.asarray(values), get_backend("torch"))
np.testing.assert_array_equal(t.numpy(), values)

# torch -> JAX: the torch backend's to_dlpack makes a torch capsule, which convert() hands to the JAX
# backend's from_dlpack -> jax.dlpack.from_dlpack(capsule): TypeError on JAX >= 0.7.2.
x = convert(torch.from_numpy(values.copy()), get_backend("jax"))
np.testing.assert_array_equal(np.asarray(x), values)
print("ok")
