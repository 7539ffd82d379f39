import numpy as np
import torch

from pipeline.data import make_batch


def to_torch(n):
    batch = make_batch(n)
    return torch.from_dlpack(batch)


def run():
    tensor = to_torch(4)
    assert tensor.shape == (4, 4)
    np.testing.assert_array_equal(tensor.numpy(), np.arange(16, dtype=np.float32).reshape(4, 4))
