from functools import partial

import jax
import jax.numpy as jnp
from jax import lax


def log(value):
    print(value)


@jax.vmap
def per_row(row):
    log(row.unsafe_buffer_pointer())
    return row * 2


@partial(jax.vmap, in_axes=(0, None))
def scaled(row, weight):
    log(weight.unsafe_buffer_pointer())  # concrete under vmap: not reported
    log(row.unsafe_buffer_pointer())
    return row * weight


@jax.grad
def loss(params):
    log(params.on_device_size_in_bytes())
    return jnp.sum(params**2)


@jax.checkpoint
def block(x):
    log(x.unsafe_buffer_pointer())
    return jnp.tanh(x)


def cumulative(xs):
    def body(carry, x):
        log(x.unsafe_buffer_pointer())
        return carry + x, carry

    return lax.scan(body, 0.0, xs)


def loop(x):
    def cond_fun(state):
        return state.is_fully_replicated

    def body_fun(state):
        return state + 1

    return lax.while_loop(cond_fun, body_fun, x)


def counted(x):
    def body(i, value):
        log(value.unsafe_buffer_pointer())
        return value + i

    return lax.fori_loop(0, 3, body, x)


def branch(pred, x):
    def yes(v):
        return torch_export(v)

    def no(v):
        log(v.addressable_shards)
        return v

    return lax.cond(pred, yes, no, x)


def torch_export(v):
    return v


def sharded(x, mesh, spec):
    def local(block):
        log(block.unsafe_buffer_pointer())
        return block * 2

    return jax.shard_map(local, mesh=mesh, in_specs=spec, out_specs=spec)(x)


def parallel(x):
    return jax.pmap(lambda shard: shard.devices())(x)


def module_level_body(carry, x):
    log(x.unsafe_buffer_pointer())
    return carry, x


def run(xs):
    return lax.scan(module_level_body, 0.0, xs)
