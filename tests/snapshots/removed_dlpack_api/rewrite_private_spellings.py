# expect: TypeError: must have __dlpack__
# fails-on: jax>=0.7.2
"""Other spellings of the capsule API: private module, importlib, aliases."""
import importlib

import jax
import jax._src.dlpack
import jax.numpy as jnp
import torch
import torch.utils.dlpack

jdl = importlib.import_module("jax.dlpack")
to_capsule = jax.dlpack.to_dlpack if hasattr(jax.dlpack, "to_dlpack") else None


def to_torch(x):
    export = importlib.import_module("jax.dlpack").to_dlpack
    return torch.utils.dlpack.from_dlpack(export(x))


t = torch.arange(4.0).reshape(2, 2).T
private = jax._src.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(t))
assert private.tolist() == [[0.0, 2.0], [1.0, 3.0]]
assert jnp.from_dlpack(torch.utils.dlpack.to_dlpack(t)).tolist() == [[0.0, 2.0], [1.0, 3.0]]
# the private function behind x.__dlpack__() still exists: its capsule is fine for torch...
assert torch.from_dlpack(jax._src.dlpack.to_dlpack(jnp.ones(2))).tolist() == [1.0, 1.0]
# ...but not for JAX's own from_dlpack
assert jax._src.dlpack.from_dlpack(jax._src.dlpack.to_dlpack(jnp.ones(3))).tolist() == [1.0, 1.0, 1.0]
assert torch.from_dlpack(jdl.to_dlpack(jnp.zeros(2))).tolist() == [0.0, 0.0]
assert to_torch(jnp.full((2,), 5.0)).tolist() == [5.0, 5.0]
