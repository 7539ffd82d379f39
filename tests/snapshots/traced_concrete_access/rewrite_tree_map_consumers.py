# expect: TracerArrayConversionError: numpy.ndarray
"""A consumer run on every leaf of a traced tree by a pytree map (`jax.tree.map(np.asarray,
batch)`, `jax.tree_util.tree_map`): each leaf is a tracer inside the trace, so the map raises as
`np.asarray(leaf)` would. Logging a host copy of a batch from a jitted step is the common shape."""
import jax
import jax.numpy as jnp
import numpy as np

SEEN = []


@jax.jit
def step(batch):
    host = jax.tree.map(np.asarray, batch)
    SEEN.append(host)
    return batch["x"] * 2


@jax.jit
def scaled(params, scale):
    SEEN.append(jax.tree_util.tree_map(np.array, params))
    return jax.tree.map(lambda p: p * scale, params)


batch = {"x": jnp.arange(3.0), "mask": jnp.ones(2)}
assert step(batch).tolist() == [0.0, 2.0, 4.0]
assert SEEN[-1]["x"].tolist() == [0.0, 1.0, 2.0] and isinstance(SEEN[-1]["mask"], np.ndarray)
out = scaled({"w": jnp.ones(2)}, 3.0)
assert out["w"].tolist() == [3.0, 3.0] and SEEN[-1]["w"].tolist() == [1.0, 1.0]
