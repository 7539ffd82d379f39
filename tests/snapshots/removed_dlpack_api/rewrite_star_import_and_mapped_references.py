# expect: NameError: to_dlpack
# fails-on: jax>=0.7.0
# requires: torch
import jax
import jax.numpy as jnp
import numpy as np
import torch
import torch.utils.dlpack
from jax.dlpack import *


def to_torch(x):
    # `to_dlpack` came from the star import, which no longer binds it: a NameError.
    return torch.utils.dlpack.from_dlpack(to_dlpack(x))


def export_tree(tree):
    # Each leaf's capsule, for a consumer that takes capsules.
    return jax.tree.map(jax.dlpack.to_dlpack, tree)


def export_all(arrays):
    return list(map(to_dlpack, arrays))


x = jnp.arange(4.0)
np.testing.assert_array_equal(to_torch(x).numpy(), np.arange(4.0))
capsules = export_tree({"w": x, "b": jnp.ones(2)})
tensors = {name: torch.utils.dlpack.from_dlpack(capsule) for name, capsule in capsules.items()}
np.testing.assert_array_equal(tensors["w"].numpy(), np.arange(4.0))
np.testing.assert_array_equal(tensors["b"].numpy(), np.ones(2))
assert [torch.utils.dlpack.from_dlpack(c).tolist() for c in export_all([x, x + 1])] == [
    [0.0, 1.0, 2.0, 3.0],
    [1.0, 2.0, 3.0, 4.0],
]
