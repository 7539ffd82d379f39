# execute: yes
# requires: multi-device
"""The twin of rewrite_flow_container_writes: what is written is on one device, or a later
write of the same key replaces the sharded value with a gathered one, or the list written to is
another binding than the one exported. Nothing is reported."""
import jax
import jax.numpy as jnp
import torch
from jax.sharding import NamedSharding, PartitionSpec as P

sharding = NamedSharding(jax.sharding.Mesh(jax.devices(), ("data",)), P("data"))
device = jax.devices()[0]


def appended(batches):
    outputs = []
    for batch in batches:
        outputs.append(jax.device_put(batch, device))
    return [torch.from_dlpack(out) for out in outputs]


def replaced(values):
    state = {"params": jax.device_put(values, sharding)}
    state["params"] = jax.device_put(state["params"], device)
    return torch.from_dlpack(state["params"])


def rebound(batches):
    outputs = []
    for batch in batches:
        outputs.append(jax.device_put(batch, sharding))
    outputs = [jax.device_put(out, device) for out in outputs]
    return [torch.from_dlpack(out) for out in outputs]


values = jnp.arange(8.0)
assert [float(t.sum()) for t in appended([values])] == [28.0]
assert float(replaced(values).sum()) == 28.0
assert [float(t.sum()) for t in rebound([values])] == [28.0]
