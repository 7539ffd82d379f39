# execute: yes
"""A function without annotations whose calls pass instances of a class that places its field
on one device, or something else besides: nothing is reported (the second's parameter is not
known, the weaker claim wins)."""
import jax
import numpy as np
import torch


class Local:
    def __init__(self, values):
        self.params = jax.device_put(values, jax.devices()[0])


class Plain:
    params = np.zeros(2, dtype=np.float32)


def params_to_torch(state):
    return torch.from_dlpack(state.params)


def any_to_torch(state):
    return torch.from_dlpack(state.params)


values = np.arange(8.0, dtype=np.float32)
local = params_to_torch(Local(values))
either = any_to_torch(Local(values)), any_to_torch(Plain())
