# expect: BufferError: __dlpack__ only supported for unsharded arrays
# requires: multi-device
"""A parameter annotated with a record class of the same file: the fields' annotations say the
values are JAX arrays (placement unknown), as a constructor call's arguments would. A return
annotation says it where the body does not (`obs` is whatever the caller passes). The exporters
are called through a registry, as a library's users would: no call of the file shows the
instances they get (when every call does, the fields are what those calls construct)."""
import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax.sharding import NamedSharding, PartitionSpec as P


@dataclasses.dataclass
class Rollout:
    obs: jax.Array
    steps: int


class Transition(NamedTuple):
    reward: jax.Array
    done: "jax.Array"


def obs_to_torch(rollout: Rollout) -> torch.Tensor:
    return torch.from_dlpack(rollout.obs)


def policy(obs) -> jax.Array:
    return obs * 2


def action_to_torch(obs: object) -> torch.Tensor:
    return torch.from_dlpack(policy(obs))


def reward_to_numpy(transition: Transition):
    return np.from_dlpack(transition.reward), transition.done


mesh = jax.sharding.Mesh(jax.devices(), ("data",))
sharded = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("data")))
EXPORTERS = {"obs": obs_to_torch, "reward": reward_to_numpy}
assert EXPORTERS["obs"](Rollout(sharded, 3)).shape == (8,)
assert action_to_torch(sharded)[3] == 6.0
assert EXPORTERS["reward"](Transition(sharded, sharded))[0][3] == 3.0
