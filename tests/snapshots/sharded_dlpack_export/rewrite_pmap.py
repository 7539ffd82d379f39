# expect: BufferError: to_dlpack can only pack a dlpack tensor from an array on a singular device
# requires: multi-device
"""jax.pmap outputs (decorated and inline) exported through __dlpack__ and consumers."""
import jax
import jax.numpy as jnp
import numpy as np
import torch.utils.dlpack


@jax.pmap
def double(a):
    return a * 2


def capsule_of(a):
    doubled = double(a)
    return doubled.__dlpack__()


t = torch.utils.dlpack.from_dlpack(capsule_of(jnp.arange(8.0).reshape(4, 2)))
assert torch.equal(t, torch.arange(8.0).reshape(4, 2) * 2)

negated = jax.pmap(lambda a: -a)(jnp.ones((4, 3)))
assert negated.__dlpack_device__()[0] is not None
assert np.from_dlpack(negated).sum() == -12.0
