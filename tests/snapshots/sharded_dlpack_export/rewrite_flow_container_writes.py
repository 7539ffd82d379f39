# expect: BufferError: __dlpack__ only supported for unsharded arrays
# requires: multi-device
"""Lists and dicts filled after they are made: a loop that appends each sharded batch to
`outputs`, `extend` with a generator of placed arrays, a metrics dict written by key, a state
dict whose `None` placeholder is replaced, `update` and `setdefault`. Each is then exported."""
import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax.sharding import NamedSharding, PartitionSpec as P

sharding = NamedSharding(jax.sharding.Mesh(jax.devices(), ("data",)), P("data"))


def appended(batches):
    outputs = []
    for batch in batches:
        outputs.append(jax.device_put(batch, sharding))
    return [torch.from_dlpack(out) for out in outputs]


def extended(batches):
    placed = []
    placed.extend(jax.device_put(batch, sharding) for batch in batches)
    return torch.from_dlpack(placed[0])


def by_key(values):
    metrics = {}
    metrics["loss"] = jax.device_put(values, sharding)
    return np.from_dlpack(metrics["loss"])


def placeholder(values):
    state = {"params": None, "step": 0}
    state["params"] = jax.device_put(values, sharding)
    return torch.from_dlpack(state["params"])


def updated(values):
    cache = {}
    cache.update(weights=jax.device_put(values, sharding))
    cache.setdefault("bias", jax.device_put(values, sharding))
    return torch.from_dlpack(cache["weights"]), torch.from_dlpack(cache["bias"])


values = jnp.arange(8.0)
assert [float(t.sum()) for t in appended([values, values * 2])] == [28.0, 56.0]
assert float(extended([values]).sum()) == 28.0
assert float(by_key(values).sum()) == 28.0
assert float(placeholder(values).sum()) == 28.0
assert [float(t.sum()) for t in updated(values)] == [28.0, 28.0]
