# expect: BufferError: __dlpack__ only supported for unsharded arrays
# requires: multi-device
"""A function without annotations that every call of the file passes an instance of the same
class: its parameter is those instances, so an export of a field (`state.params`) that the
constructor placed over several devices gathers it."""
import jax
import numpy as np
import torch
from jax.sharding import Mesh, NamedSharding, PartitionSpec


class TrainState:
    def __init__(self, values):
        mesh = Mesh(np.array(jax.devices()[:4]), ("batch",))
        self.params = jax.device_put(values, NamedSharding(mesh, PartitionSpec("batch")))
        self.step = 0


def params_to_torch(state):
    return torch.from_dlpack(state.params)


state = TrainState(np.arange(8.0, dtype=np.float32))
assert params_to_torch(state).tolist() == list(range(8))
