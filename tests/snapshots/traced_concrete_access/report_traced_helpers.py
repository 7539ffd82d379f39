import jax
import jax.numpy as jnp
import numpy as np

ADDRESSES = []


def register(buffer):
    # Called from the jitted step below: `buffer` is a tracer there.
    ADDRESSES.append(buffer.unsafe_buffer_pointer())


def to_host(value):
    return np.asarray(value)


def checked(value):
    if isinstance(value, jax.core.Tracer):
        return value
    return np.asarray(value)  # only reached with a concrete array


def host_sum(value):
    return np.asarray(value).sum().astype(np.float32)


@jax.jit
def step(params, x):
    jax.tree.map(register, params)
    host = jax.named_call(to_host, name="to_host")(x)
    checked(x)
    total = jax.pure_callback(host_sum, jax.ShapeDtypeStruct((), jnp.float32), x)
    return x * total + jnp.sum(host)


@jax.jit
def leaves_to_host(tree):
    # A lambda mapped over a traced tree runs on its traced leaves.
    return jax.tree.map(lambda leaf: np.asarray(leaf).sum(), tree)


@jax.jit
def scaled_leaves(tree):
    return jax.tree.map(lambda leaf: leaf * 2, tree)  # nothing concrete: no finding
