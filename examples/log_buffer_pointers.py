"""A training step that logs where its inputs live, for a native profiler (JAX001)."""
from functools import partial

import jax
import jax.numpy as jnp

seen_pointers = []


@partial(jax.jit, static_argnames=("scale",))
def step(params, batch, scale=1.0):
    # Inside the trace these are Tracers: unsafe_buffer_pointer() raises.
    seen_pointers.append(batch.unsafe_buffer_pointer())
    return params - scale * jnp.mean(batch) * params


if __name__ == "__main__":
    params, batch = jnp.ones(4), jnp.arange(8.0)
    out = step(params, batch, scale=0.5)
    assert jnp.allclose(out, params - 0.5 * jnp.mean(batch) * params)
    assert seen_pointers and seen_pointers[0] > 0
