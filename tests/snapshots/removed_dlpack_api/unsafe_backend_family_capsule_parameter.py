# expect: TypeError: __dlpack__
# fails-on: jax>=0.7.2
# requires: torch
"""A backend registry whose JAX backend's `from_dlpack` names its parameter `capsule`, as
PhiML's does. The torch backend's capsules reach it through the dispatcher, so it is fixed to
turn such a capsule into a torch tensor first; the fixed method still hands `capsule` to JAX,
and that name alone must not make the fixed file fail `--check`: every value that reaches the
call is either the converted tensor or, past `if type(capsule).__name__ == "PyCapsule"`, no
capsule at all."""
import jax.dlpack
import jax.numpy as jnp
import numpy as np
import torch
import torch.utils.dlpack


class JaxBackend:
    def to_dlpack(self, array):
        return array

    def from_dlpack(self, capsule):
        return jax.dlpack.from_dlpack(capsule)


class TorchBackend:
    def to_dlpack(self, tensor):
        return torch.utils.dlpack.to_dlpack(tensor)

    def from_dlpack(self, capsule):
        return torch.utils.dlpack.from_dlpack(capsule)


REGISTRY = {"jax": JaxBackend(), "torch": TorchBackend()}


def convert(tensor, source, target):
    return REGISTRY[target].from_dlpack(REGISTRY[source].to_dlpack(tensor))


values = np.arange(12.0, dtype=np.float32).reshape(3, 4)
np.testing.assert_array_equal(np.asarray(convert(torch.from_numpy(values.copy()), "torch", "jax")), values)
np.testing.assert_array_equal(convert(jnp.asarray(values), "jax", "torch").numpy(), values)
np.testing.assert_array_equal(np.asarray(convert(jnp.asarray(values), "jax", "jax")), values)
