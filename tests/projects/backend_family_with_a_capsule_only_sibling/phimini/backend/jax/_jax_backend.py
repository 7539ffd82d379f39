import jax

from .._backend import Backend


class JaxBackend(Backend):
    name = "jax"

    def is_tensor(self, x):
        return isinstance(x, jax.Array)

    def to_dlpack(self, tensor):
        from jax import dlpack
        return dlpack.to_dlpack(tensor)

    def from_dlpack(self, capsule):
        from jax import dlpack
        return dlpack.from_dlpack(capsule)
