# expect: AttributeError: to_dlpack
# fails-on: jax>=0.7.0
# option: target-jax-version=0.7.2
# (torch_to_jax's capsules are deprecated, not refused, before 0.7.2, and the old path raises on
# its transposed tensor there too: the fix is written for 0.7.2 and must run on 0.7.0 as well)
"""Capsules in lists, dicts and comprehensions, consumed element by element."""
import jax
import jax.dlpack
import jax.numpy as jnp
import torch
import torch.utils.dlpack


def params_to_torch(params):
    capsules = [jax.dlpack.to_dlpack(p) for p in params]
    return [torch.utils.dlpack.from_dlpack(c) for c in capsules]


def state_to_torch(state):
    capsules = {"mean": jax.dlpack.to_dlpack(state[0]), "var": jax.dlpack.to_dlpack(state[1])}
    return torch.from_dlpack(capsules["mean"]), torch.from_dlpack(capsules["var"])


def batch_to_torch(batch):
    out = []
    capsules = [jax.dlpack.to_dlpack(x) for x in batch]
    for capsule in capsules:
        out.append(torch.utils.dlpack.from_dlpack(capsule))
    return out


def gather(arrays):
    capsules = []
    for a in arrays:
        capsules.append(jax.dlpack.to_dlpack(a))
    return [torch.from_dlpack(c) for c in capsules]


def torch_to_jax(tensors):
    capsules = [torch.utils.dlpack.to_dlpack(t) for t in tensors]
    return [jax.dlpack.from_dlpack(c) for c in capsules]


ts = params_to_torch([jnp.ones(2), jnp.arange(3.0)])
assert [t.tolist() for t in ts] == [[1.0, 1.0], [0.0, 1.0, 2.0]]
mean, var = state_to_torch((jnp.zeros(2), jnp.ones(2)))
assert (mean.tolist(), var.tolist()) == ([0.0, 0.0], [1.0, 1.0])
assert [t.sum().item() for t in batch_to_torch([jnp.ones(3), jnp.ones(4)])] == [3.0, 4.0]
assert [t.tolist() for t in gather([jnp.ones(1), jnp.zeros(1)])] == [[1.0], [0.0]]
arrays = torch_to_jax([torch.arange(6.0).reshape(2, 3).T, torch.ones(2, requires_grad=True)])
assert arrays[0].tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
assert arrays[1].tolist() == [1.0, 1.0]
