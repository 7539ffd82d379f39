import numpy as np
import torch

from tcmini.interfaces.tensortrans import general_args_to_backend
from tcmini.backends import get_backend

values = np.arange(6, dtype=np.float32).reshape(2, 3)

# JAX -> torch: jax_backend.to_dlpack (JAX005, fixed by --unsafe-fixes) -> pytorch_backend.from_dlpack
(t,) = general_args_to_backend([get_backend("jax").convert_to_tensor(values)], target_backend="pytorch")
np.testing.assert_array_equal(t.numpy(), values)

# torch -> JAX: pytorch_backend.to_dlpack makes a torch capsule; tensortrans hands it to
# jax_backend.from_dlpack, which after the fix makes it a torch tensor before JAX takes it.
(x,) = general_args_to_backend([torch.from_numpy(values.copy())], target_backend="jax")
np.testing.assert_array_equal(np.asarray(x), values)
print("ok")
