# execute: yes
"""Values the file knows through real structure are never JAX006's: torch tensors and NumPy
arrays in dicts, dataclasses and tuples, and JAX arrays it creates on one device and
passes through helpers, `self` and tree maps."""
from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import torch


@dataclass
class Batch:
    images: torch.Tensor
    labels: np.ndarray


class Pair(NamedTuple):
    left: jax.Array
    right: jax.Array


def make_inputs():
    return {"x": jnp.ones(4), "y": jnp.zeros(4)}


class Cache:
    def __init__(self):
        self.table = jnp.arange(6.0)

    def export(self):
        return torch.from_dlpack(self.table)


batch = Batch(images=torch.ones(2, 3), labels=np.arange(2))
as_numpy = np.from_dlpack(batch.images), np.from_dlpack(batch.labels)

inputs = make_inputs()
tensors = {name: torch.from_dlpack(value) for name, value in inputs.items()}
leaves = jax.tree.map(np.from_dlpack, inputs)

pair = Pair(jnp.ones(2), jnp.full(2, 3.0))
right = np.from_dlpack(pair.right)

weights, bias = torch.ones(2), torch.zeros(2)
total = np.from_dlpack(weights) + np.from_dlpack(bias)

cached = Cache().export()
assert tensors["x"].shape == (4,) and right[0] == 3.0 and cached.shape == (6,)
