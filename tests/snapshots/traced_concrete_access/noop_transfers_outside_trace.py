# execute: yes
"""The same transfers where they work: on the concrete result, after the jitted call returns,
and inside a trace only on what is no tracer (a constant, a shape). Nothing is reported."""
import jax
import jax.numpy as jnp
import numpy as np

cpu = jax.devices("cpu")[0]


@jax.jit
def doubled(x):
    scale = np.asarray(jax.device_get(2.0))  # host data stays host data
    return x * scale + len(jax.device_get(x.shape))


result = doubled(jnp.arange(3.0))
host = np.asarray(jax.device_get(result))
placed = np.asarray(jax.device_put(result, cpu))
ready = np.asarray(jax.block_until_ready(result))
assert host.tolist() == placed.tolist() == ready.tolist() == [1.0, 3.0, 5.0]
