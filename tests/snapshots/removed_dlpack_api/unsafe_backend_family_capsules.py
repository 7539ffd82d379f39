# expect: TypeError: __dlpack__
# fails-on: jax>=0.7.2
# requires: torch
"""A backend registry whose dispatcher hands one backend's `to_dlpack` result to another's
`from_dlpack` (tensorcircuit's shape, in one module). The JAX backend's pair already passes
arrays, but the torch backend's `to_dlpack` returns a torch capsule, which reaches
`jax.dlpack.from_dlpack` and fails from JAX 0.7.2, whatever the parameter is called. Fixed as
tensorcircuit-ng's maintainers did: the JAX side turns another library's capsule into that
library's tensor first (unsafe: that path now needs torch where the capsule arrives)."""
import jax.dlpack
import jax.numpy as jnp
import numpy as np
import torch
import torch.utils.dlpack


class JaxBackend:
    def to_dlpack(self, array):
        return array

    def from_dlpack(self, value):
        return jax.dlpack.from_dlpack(value)


class TorchBackend:
    def to_dlpack(self, tensor):
        return torch.utils.dlpack.to_dlpack(tensor)

    def from_dlpack(self, capsule):
        return torch.utils.dlpack.from_dlpack(capsule)


BACKENDS = {"jax": JaxBackend(), "torch": TorchBackend()}


def transfer(tensor, source, target):
    return BACKENDS[target].from_dlpack(BACKENDS[source].to_dlpack(tensor))


values = np.arange(6.0, dtype=np.float32).reshape(2, 3)
np.testing.assert_array_equal(np.asarray(transfer(torch.from_numpy(values.copy()), "torch", "jax")), values)
np.testing.assert_array_equal(transfer(jnp.asarray(values), "jax", "torch").numpy(), values)
np.testing.assert_array_equal(np.asarray(transfer(jnp.asarray(values), "jax", "jax")), values)
