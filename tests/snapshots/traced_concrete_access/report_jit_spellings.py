import functools

import jax
import jax.numpy as jnp


def log(*values):
    print(*values)


class Trainer:
    def __init__(self, lr):
        self.lr = lr
        # Compiled once per instance; `_step` itself may still be called eagerly.
        self._fast_step = jax.jit(self._step, donate_argnums=0)

    def _step(self, params, grads):
        log(params.unsafe_buffer_pointer())
        return params - self.lr * grads


def train_step(params, batch):
    log(batch.devices())
    return params - jnp.mean(batch)


def eval_step(params, batch):
    log(batch.is_fully_replicated)
    return jnp.mean(params * batch)


STEPS = {"train": jax.jit(train_step), "eval": jax.jit(eval_step)}
COMPILED = {name: jax.jit(fn) for name, fn in {"train": train_step, "eval": eval_step}.items()}
BOTH = [jax.jit(fn) for fn in (train_step, eval_step)]


def named(x):
    log(x.tolist())
    return x * 2


profiled = jax.jit(jax.named_call(named, name="profiled"))
donating = functools.partial(jax.jit, donate_argnums=0)(named)
