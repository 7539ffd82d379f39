# execute: yes
import io

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import io_callback

LOGGED = []


def host_log(values):
    # Host callbacks receive concrete NumPy arrays: every concrete API works here.
    LOGGED.append((values.tolist(), bytes(values), memoryview(values).nbytes))


def host_norm(values):
    return np.asarray(np.linalg.norm(np.asarray(values)), dtype=np.float32)


def host_save(values):
    buffer = io.BytesIO()
    np.save(buffer, np.array(values))
    return np.int32(len(buffer.getvalue()))


@jax.jit
def step(x):
    jax.debug.callback(host_log, x)
    norm = jax.pure_callback(host_norm, jax.ShapeDtypeStruct((), jnp.float32), x)

    def inline_host(v):
        return np.asarray(v).sum().astype(np.float32)

    total = jax.pure_callback(inline_host, jax.ShapeDtypeStruct((), jnp.float32), x)
    size = io_callback(host_save, jax.ShapeDtypeStruct((), jnp.int32), x)
    return x / norm + total * 0 + size * 0


x = jnp.array([3.0, 4.0], dtype=jnp.float32)
out = step(x)
jax.effects_barrier()
assert jnp.allclose(out, x / 5.0)
assert LOGGED and LOGGED[0][0] == [3.0, 4.0] and LOGGED[0][2] == 8
