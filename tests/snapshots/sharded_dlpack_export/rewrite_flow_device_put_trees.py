# expect: BufferError: __dlpack__ only supported for unsharded arrays
# requires: multi-device
"""A batch placed as one pytree: `jax.device_put` of a dict with a dict of shardings (the
single-device entry is left alone), of a tuple with a tuple of shardings, and of a dict
with one sharding for every leaf, then read by key, unpacked and walked with `.items()`; and
of a function's parameter, whose placed tree has the shape of the shardings' tree."""
import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax.sharding import NamedSharding, PartitionSpec as P, SingleDeviceSharding

mesh = jax.sharding.Mesh(jax.devices(), ("data",))
rows = NamedSharding(mesh, P("data"))
host = SingleDeviceSharding(jax.devices()[0])

batch = jax.device_put(
    {"images": np.ones((8, 3), np.float32), "step": np.int32(7)},
    {"images": rows, "step": host},
)
images_t = torch.from_dlpack(batch["images"])
step_t = torch.from_dlpack(batch["step"])

inputs, targets = jax.device_put((jnp.ones((8, 2)), jnp.arange(8.0)), (rows, rows))
targets_np = np.from_dlpack(targets)

params = jax.device_put({"w": jnp.ones((8, 4)), "b": jnp.zeros(8)}, rows)
torch_params = {name: torch.from_dlpack(value) for name, value in params.items()}



def export_placed(tree):
    placed = jax.device_put(tree, {"x": rows, "n": host})
    return torch.from_dlpack(placed["x"]), torch.from_dlpack(placed["n"])


x_t, n_t = export_placed({"x": jnp.ones((8, 2)), "n": jnp.arange(2.0)})

assert images_t.shape == (8, 3) and int(step_t) == 7
assert targets_np.tolist() == list(np.arange(8.0)) and inputs.shape == (8, 2)
assert torch_params["w"].shape == (8, 4) and float(torch_params["b"].sum()) == 0.0
assert x_t.shape == (8, 2) and float(x_t.sum()) == 16.0 and n_t.tolist() == [0.0, 1.0]
