# expect: AttributeError: to_dlpack
# fails-on: jax>=0.7.0
import jax.dlpack as jdl
import jax.numpy as jnp
import numpy as np
from jax import dlpack
from torch.utils import dlpack as torch_dlpack

x = jnp.array([[1, 2], [3, 4]], dtype=jnp.int32)
t = torch_dlpack.from_dlpack(jdl.to_dlpack(x))
n = np.from_dlpack(dlpack.to_dlpack(x.T))
assert t.tolist() == [[1, 2], [3, 4]]
assert n.tolist() == [[1, 3], [2, 4]]
