# option: target-platforms=cpu,gpu,metal
# expect: BufferError: __dlpack__ device only supported for CPU, GPU and TPU pinned host
"""An argument that calls something is evaluated once: a wrapped statement's fallback would
evaluate it again (a second `env.step()`, the next item of the queue), so these exports go
through the helper; a plain name is still wrapped."""
import jax
import jax.numpy as jnp
import numpy as np
import torch
from plugin_backend import plugin_backend


class Env:
    def __init__(self):
        self.steps = 0

    def step(self) -> jax.Array:
        self.steps += 1
        return jnp.full(3, float(self.steps))


def rollout(env: Env, queue: list):
    obs = torch.from_dlpack(env.step())
    item = np.from_dlpack(jnp.asarray(queue.pop()))
    last = jnp.asarray(queue[-1])
    tail = np.from_dlpack(last)
    return obs, item, tail


fast_env, slow_env = Env(), Env()
fast = rollout(fast_env, [1.0, 2.0, 3.0])
with plugin_backend():
    slow = rollout(slow_env, [1.0, 2.0, 3.0])
assert slow_env.steps == fast_env.steps == 1
assert torch.equal(slow[0], fast[0]) and float(slow[1]) == float(fast[1]) == 3.0
assert float(slow[2]) == float(fast[2]) == 2.0
