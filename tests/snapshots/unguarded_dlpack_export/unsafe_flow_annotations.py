# expect: BufferError: __dlpack__ only supported for unsharded arrays
# requires: multi-device
"""Library boundaries that say they take JAX arrays but not how they are placed: jaxtyping
annotations, a dict annotated `dict[str, jax.Array]` mapped to PyTorch, `match case
jax.Array()` and an isinstance filter inside a tree map."""
from typing import TYPE_CHECKING

import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax.sharding import NamedSharding, PartitionSpec as P

if TYPE_CHECKING:
    from jaxtyping import Array, Float


def logits_to_torch(logits: "Float[Array, 'batch vocab']") -> torch.Tensor:
    return torch.from_dlpack(logits)


def params_to_torch(params: dict[str, jax.Array]) -> dict[str, torch.Tensor]:
    return jax.tree.map(torch.from_dlpack, params)


def to_host(value):
    match value:
        case jax.Array():
            return np.from_dlpack(value)
        case _:
            return np.asarray(value)


def tree_to_torch(tree):
    return jax.tree.map(lambda leaf: torch.from_dlpack(leaf) if isinstance(leaf, jax.Array) else leaf, tree)


mesh = jax.sharding.Mesh(jax.devices(), ("data",))
sharded = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("data")))
assert logits_to_torch(sharded).shape == (8,)
assert params_to_torch({"w": sharded})["w"].shape == (8,)
assert to_host(sharded)[3] == 3.0 and to_host([1.0])[0] == 1.0
assert tree_to_torch({"w": jnp.arange(2.0), "step": 3})["step"] == 3
