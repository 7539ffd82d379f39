# expect: AttributeError: to_dlpack
# fails-on: jax>=0.7.0
"""A backend's to_dlpack/from_dlpack pair: the round trip's capsule becomes the array itself.

Multi-backend libraries give each backend class such a pair, and `from_dlpack` is handed what
`to_dlpack` returned. Kept a capsule (`x.__dlpack__()`), the round trip would fail on JAX
0.7.2+, where `jax.dlpack.from_dlpack` takes no capsule; the array passes both ways on every
release. Unsafe: a caller outside the class that needs a capsule must now call `__dlpack__()`.
"""
import jax
import jax.dlpack
import jax.numpy as jnp
import numpy as np


class JaxBackend:
    def convert(self, values):
        return jnp.asarray(values)

    def to_dlpack(self, tensor):
        return jax.dlpack.to_dlpack(tensor)

    def from_dlpack(self, dlpack_capsule):
        return jax.dlpack.from_dlpack(dlpack_capsule)


backend = JaxBackend()
tensor = backend.convert(np.arange(6.0).reshape(2, 3))
back = backend.from_dlpack(backend.to_dlpack(tensor))
np.testing.assert_array_equal(np.asarray(back), np.arange(6.0).reshape(2, 3))
