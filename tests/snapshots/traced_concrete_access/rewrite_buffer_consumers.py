# expect: TypeError: bytes-like object is required
import ctypes
import pickle

import jax
import jax.numpy as jnp
import numpy as np

HOST = {}


@jax.jit
def checksum_and_scale(x, scale):
    HOST["nbytes"] = memoryview(x).nbytes
    HOST["raw"] = bytes(x)
    HOST["copy"] = np.frombuffer(x, dtype=np.float32).sum()
    HOST["second"] = (ctypes.c_float * 4).from_buffer_copy(x)[1]
    HOST["pickled"] = pickle.dumps(x)
    return x * scale


x = jnp.arange(4.0, dtype=jnp.float32)
out = checksum_and_scale(x, 2.0)
assert jnp.allclose(out, x * 2.0)
assert HOST["nbytes"] == 16 and HOST["raw"] == np.arange(4.0, dtype=np.float32).tobytes()
assert HOST["copy"] == 6.0 and HOST["second"] == 1.0
assert jnp.array_equal(pickle.loads(HOST["pickled"]), x)
