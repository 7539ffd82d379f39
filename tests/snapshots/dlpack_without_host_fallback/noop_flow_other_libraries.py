# option: target-platforms=cpu,gpu,metal
# execute: yes
"""Torch tensors and NumPy arrays moved between each other through the same structures are
not JAX arrays: no plugin-backend fallback is needed, and none is added."""
from dataclasses import dataclass

import numpy as np
import torch


@dataclass
class Batch:
    images: torch.Tensor
    labels: np.ndarray


def load():
    return {"images": torch.ones(2, 3), "mask": np.ones(3, dtype=bool)}


batch = Batch(images=torch.zeros(2), labels=np.arange(2))
labels = torch.from_dlpack(batch.labels)
images = np.from_dlpack(batch.images)
for name, value in load().items():
    copy = np.from_dlpack(value)
assert labels.tolist() == [0, 1] and images.shape == (2,)
