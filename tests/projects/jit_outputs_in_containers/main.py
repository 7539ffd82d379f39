import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax.sharding import NamedSharding, PartitionSpec as P

from train.step import step

sharding = NamedSharding(jax.sharding.Mesh(jax.devices(), ("data",)), P("data"))
batch = jax.device_put(jnp.arange(8.0), sharding)

w, metrics = step(2.0, batch)
logits = torch.from_dlpack(metrics["logits"])
loss = np.from_dlpack(metrics["loss"])

assert float(logits.sum()) == 56.0
assert float(loss) == float(((np.arange(8.0) * 2) ** 2).mean())
assert float(w) == 1.0
print("ok")
