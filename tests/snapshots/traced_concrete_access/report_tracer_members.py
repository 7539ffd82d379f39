import jax
import jax.numpy as jnp


@jax.jit
def threshold(x, limit):
    # `.item()` turns the tracer into a Python number the computation then uses.
    top = x.max().item()
    return jnp.where(x > limit, top, x)


@jax.jit
def positions(mask):
    # A data-dependent shape: pass `size=` to nonzero instead.
    (index,) = mask.nonzero()
    return index


@jax.jit
def as_list(x):
    return x.tolist()


@jax.jit
def maybe_copy(x):
    if x.committed:
        return x
    return x + 0


@jax.jit
def leaf_sizes(params):
    sizes = [leaf.on_device_size_in_bytes() for leaf in jax.tree.leaves(params)]
    return sum(sizes)
