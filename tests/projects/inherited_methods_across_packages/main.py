import numpy as np
import torch

from data.loader import Loader

loader = Loader()
batch = loader.shard(loader.batch(8))
tensor = torch.from_dlpack(batch)
zeros = np.from_dlpack(loader.template)

assert float(tensor.sum()) == 28.0
assert float(zeros.sum()) == 0.0
print("ok")
