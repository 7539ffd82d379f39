# expect: BufferError: __dlpack__ only supported for unsharded arrays
# requires: multi-device
"""Records updated by copy: `dataclasses.replace(state, params=...)` and a NamedTuple's
`_replace(...)` put a sharded array in a field; that field is then exported. A field the
update leaves alone keeps what it held."""
import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax.sharding import NamedSharding, PartitionSpec as P

sharding = NamedSharding(jax.sharding.Mesh(jax.devices(), ("data",)), P("data"))


@dataclasses.dataclass(frozen=True)
class TrainState:
    params: jax.Array
    step: int = 0


class Batch(NamedTuple):
    inputs: jax.Array
    labels: jax.Array


state = TrainState(jnp.zeros(8))
state = dataclasses.replace(state, params=jax.device_put(jnp.arange(8.0), sharding), step=1)
params = torch.from_dlpack(state.params)

batch = Batch(jnp.ones(8), jnp.zeros(8))
sharded = batch._replace(inputs=jax.device_put(jnp.full((8,), 2.0), sharding))
inputs = np.from_dlpack(sharded.inputs)

assert float(params.sum()) == 28.0 and state.step == 1
assert float(inputs.sum()) == 16.0
