# option: target-platforms=cpu,tpu
# expect: ValueError: Received incompatible devices for jitted computation
"""torch -> JAX on a TPU host: the import lands on the CPU device, committed, and meets TPU arrays.
Runs under the simulated TPU on a CPU (and on a real TPU, where it is the TPU itself)."""
import jax
import jax.dlpack
import jax.numpy as jnp
import numpy as np
import torch
from platform_sim import platform_of_device, simulated

with simulated("tpu"):
    weights = jax.device_put(jnp.ones(3), jax.devices()[0])  # a committed TPU array
    batch = jax.dlpack.from_dlpack(torch.arange(3.0))
    scaled = jnp.from_dlpack(np.arange(3.0, dtype=np.float32)) * 2
    step = jax.jit(lambda w, b: w * b)
    out = step(weights, batch)
    assert out.tolist() == [0.0, 1.0, 2.0]
    assert platform_of_device(next(iter((scaled + weights).devices()))) == jax.default_backend()
    assert scaled.tolist() == [0.0, 2.0, 4.0]
