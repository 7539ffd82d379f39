"""Values of unknown origin: untyped parameters, attributes, calls into other code."""
from typing import Any

import jax

import numpy as np
import torch
from mylib import load


def untyped(value, other: Any):
    return torch.from_dlpack(value), np.from_dlpack(other)


def loaded(path):
    value = load(path)
    return torch.from_dlpack(value), value.unsafe_buffer_pointer()


class Model:
    def export(self):
        return torch.from_dlpack(self.weights), self.bias.__dlpack__()


def reassigned(value: "jax.Array"):
    value = load(value)
    return torch.from_dlpack(value)


def packed(*values: "jax.Array", **named: "jax.Array"):
    return torch.from_dlpack(values), np.from_dlpack(named)


def converted(value):
    if isinstance(value, jax.Array):
        value = load(value)
        return torch.from_dlpack(value)
    return None
