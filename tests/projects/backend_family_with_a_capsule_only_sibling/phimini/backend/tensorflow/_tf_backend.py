from .._backend import Backend


class TFBackend(Backend):
    name = "tensorflow"

    def is_tensor(self, x):
        return type(x).__module__.startswith("tensorflow")

    def to_dlpack(self, tensor):
        from tensorflow import experimental
        return experimental.dlpack.to_dlpack(tensor)

    def from_dlpack(self, capsule):
        # TensorFlow's from_dlpack takes only capsules: what the other backends' to_dlpack return.
        from tensorflow import experimental
        return experimental.dlpack.from_dlpack(capsule)
