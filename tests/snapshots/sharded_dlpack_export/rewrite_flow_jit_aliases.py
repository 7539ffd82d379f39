# expect: BufferError: __dlpack__ only supported for unsharded arrays
# requires: multi-device
"""Sharded jit configured once and reused: a module-level alias of partial(jax.jit, ...),
a decorator factory returning one, a dict of jitted steps, a jitted method, and
with_sharding_constraint inside a jitted function. The unsharded step is left alone."""
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()), ("data",))
data_sharding = NamedSharding(mesh, P("data"))
sharded_jit = partial(jax.jit, out_shardings=data_sharding)


def jit_with(**options):
    return partial(jax.jit, **options)


@sharded_jit
def normalize(x):
    return x / jnp.linalg.norm(x)


@jit_with(out_shardings=data_sharding)
def scale(x, factor=2.0):
    return x * factor


@jax.jit
def constrain(x):
    return jax.lax.with_sharding_constraint(x + 1, data_sharding)


steps = {
    "train": jax.jit(lambda x: x * 0.5, out_shardings=data_sharding),
    "eval": jax.jit(lambda x: x - 1),
}


class Model:
    @partial(jax.jit, static_argnums=0, out_shardings=data_sharding)
    def forward(self, x):
        return jnp.tanh(x)


x = jnp.arange(8.0)
outputs = [
    torch.from_dlpack(normalize(x)),
    torch.from_dlpack(scale(x)),
    np.from_dlpack(constrain(x)),
    np.from_dlpack(steps["train"](x)),
    torch.from_dlpack(Model().forward(x)),
]
evaluated = np.from_dlpack(steps["eval"](x))

assert [tuple(o.shape) for o in outputs] == [(8,)] * 5
assert float(outputs[1].sum()) == 56.0 and evaluated[0] == -1.0
