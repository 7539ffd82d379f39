import numpy as np
import torch


def to_torch(x):
    return torch.from_dlpack(x)


def to_numpy(x):
    return np.from_dlpack(x)
