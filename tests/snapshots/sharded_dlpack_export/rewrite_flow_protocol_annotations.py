# expect: BufferError: __dlpack__ only supported for unsharded arrays
# requires: multi-device, torch
"""A parameter annotated with a `typing.Protocol` is read from what the calls pass (the concrete
exporter), not from the Protocol's empty method (issue 54: the annotation hid the concrete
class, and the export in it got no finding; without the annotation it was found)."""
from typing import Protocol

import jax
import jax.numpy as jnp
import torch
from jax.sharding import NamedSharding, PartitionSpec as P


class Exporter(Protocol):
    def export(self, value): ...


class TorchExporter:
    def export(self, value):
        return torch.from_dlpack(value)


def run(exporter: Exporter, value):
    return exporter.export(value)


sharding = NamedSharding(jax.sharding.Mesh(jax.devices(), ("data",)), P("data"))
batch = jax.device_put(jnp.arange(8.0), sharding)

tensor = run(TorchExporter(), batch)
ones = run(TorchExporter(), jnp.ones(8))
assert float(tensor.sum()) == 28.0 and float(ones.sum()) == 8.0
