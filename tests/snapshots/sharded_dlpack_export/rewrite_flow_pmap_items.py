# expect: BufferError: __dlpack__ only supported for unsharded arrays
# requires: multi-device
"""The dict a pmapped step returns, walked with `.items()` and `.values()` to hand each
metric to PyTorch (reading one by key was followed already), and a returned tuple unpacked."""
import jax
import jax.numpy as jnp
import numpy as np
import torch

n = len(jax.devices())


@jax.pmap
def step(x):
    return {"loss": jnp.mean(x ** 2, axis=-1), "total": jnp.sum(x, axis=-1)}


metrics = step(jnp.arange(float(n * 2)).reshape(n, 2))
torch_metrics = {}
for name, value in metrics.items():
    torch_metrics[name] = torch.from_dlpack(value)
host_metrics = [np.from_dlpack(value) for value in metrics.values()]

low, high = jax.pmap(lambda x: (x - 1, x + 1))(jnp.zeros((n, 3)))
high_np = np.from_dlpack(high)

assert torch_metrics["total"].tolist() == [float(4 * i + 1) for i in range(n)]
assert len(host_metrics) == 2 and host_metrics[0].shape == (n,)
assert high_np.sum() == 3 * n and low.shape == (n, 3)
