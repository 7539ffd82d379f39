import jax
import jax.dlpack


class JaxBackend:
    name = "jax"

    def convert(self, values):
        return jax.numpy.asarray(values)

    def to_dlpack(self, tensor):
        return jax.dlpack.to_dlpack(tensor)

    def from_dlpack(self, capsule):
        return jax.dlpack.from_dlpack(capsule)
