# option: target-platforms=cpu,gpu,metal
# expect: JaxRuntimeError: cannot be used as a DLPack device
"""JAX arrays reaching PyTorch and NumPy through a helper's return value, a dict walked with
.items(), a dataclass field, `self` and a tree of leaves: each export gets the host-copy
fallback for backends without DLPack."""
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
import torch
from plugin_backend import plugin_backend


@dataclass
class Outputs:
    logits: jax.Array
    step: int


def predict(x):
    return jnp.tanh(jnp.asarray(x, dtype=jnp.float32))


class Exporter:
    def __init__(self):
        self.table = jnp.arange(4.0)

    def table_to_torch(self):
        table = torch.from_dlpack(self.table)
        return table


def export_all():
    metrics = {"loss": jnp.ones(3), "accuracy": jnp.zeros(3)}
    converted = {}
    for name, value in metrics.items():
        converted[name] = np.from_dlpack(value)
    outputs = Outputs(logits=predict(np.ones(2)), step=1)
    logits = torch.from_dlpack(outputs.logits)
    leaves = []
    for leaf in jax.tree.leaves(metrics):
        leaves.append(np.from_dlpack(leaf))
    return converted, logits, leaves, Exporter().table_to_torch()


fast = export_all()
with plugin_backend():
    slow = export_all()
assert np.array_equal(slow[0]["loss"], fast[0]["loss"]) and torch.equal(slow[1], fast[1])
assert len(slow[2]) == 2 and torch.equal(slow[3], fast[3])
