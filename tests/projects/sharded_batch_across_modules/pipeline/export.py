import numpy as np
import torch

from jax.sharding import NamedSharding, PartitionSpec

from pipeline.data import MESH, make_batch, place, put_rows


def to_torch(n):
    batch = make_batch(n)
    return torch.from_dlpack(batch)


def rows_to_numpy(values):
    return np.from_dlpack(put_rows(values))


def placed_to_numpy(values):
    return np.from_dlpack(place(values, NamedSharding(MESH, PartitionSpec("batch"))))


def run():
    placed = placed_to_numpy(np.full((8, 2), 3.0, np.float32))
    np.testing.assert_array_equal(placed, np.full((8, 2), 3.0, np.float32))
    host = rows_to_numpy(np.ones((8, 2), np.float32))
    np.testing.assert_array_equal(host, np.ones((8, 2), np.float32))
    tensor = to_torch(4)
    assert tensor.shape == (4, 4)
    np.testing.assert_array_equal(tensor.numpy(), np.arange(16, dtype=np.float32).reshape(4, 4))
