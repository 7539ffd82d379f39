# expect: BufferError: __dlpack__ only supported for unsharded arrays
# requires: multi-device
"""Sharded parameters handed to PyTorch the ways training code holds them: a dict built
by a helper and walked with .items() and .values(), tuple unpacking, a list literal and
its subscript, a comprehension, and a name reassigned to its sharded copy."""
import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.sharding.Mesh(jax.devices(), ("data",))
row_sharded = NamedSharding(mesh, P("data"))
replicated = NamedSharding(mesh, P())


def init_params(key):
    w_key, _ = jax.random.split(key)
    params = {
        "w": jax.device_put(jax.random.normal(w_key, (8, 4)), row_sharded),
        "b": jax.device_put(jnp.zeros(4), replicated),
    }
    return params


params = init_params(jax.random.key(0))

torch_params = {}
for name, value in params.items():
    torch_params[name] = torch.from_dlpack(value)

norms = [float(torch.from_dlpack(p).norm()) for p in params.values()]

weights, bias = params["w"], params["b"]
bias_t = torch.utils.dlpack.from_dlpack(bias)

stack = [weights, bias]
first = np.from_dlpack(stack[0])

batch = jnp.ones((8, 4))
batch = jax.device_put(batch, row_sharded)
host_batch = np.from_dlpack(batch)

assert torch_params["w"].shape == (8, 4) and len(norms) == 2
assert first.shape == (8, 4) and host_batch.shape == (8, 4) and bias_t.shape == (4,)
assert np.allclose(np.asarray(torch_params["w"]), np.asarray(params["w"]))
