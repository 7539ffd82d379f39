# expect: AttributeError: to_dlpack
# fails-on: jax>=0.7.0
"""Capsules that leave the function stay capsules, made by the array protocol."""
import jax
import jax.dlpack
import jax.numpy as jnp
import torch

PENDING = {}


def export(x):
    capsule = jax.dlpack.to_dlpack(x)
    return capsule


def stash(name, x):
    PENDING[name] = jax.dlpack.to_dlpack(x)


def export_all(arrays):
    return {name: jax.dlpack.to_dlpack(array) for name, array in arrays.items()}


t = torch.from_dlpack(export(jnp.arange(4.0)))
assert t.tolist() == [0.0, 1.0, 2.0, 3.0]
stash("w", jnp.full((2,), 7.0))
assert torch.utils.dlpack.from_dlpack(PENDING.pop("w")).tolist() == [7.0, 7.0]
both = export_all({"a": jnp.zeros(2), "b": jnp.ones(2)})
assert torch.from_dlpack(both["b"]).tolist() == [1.0, 1.0]
