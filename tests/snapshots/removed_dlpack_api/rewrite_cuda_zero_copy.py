# expect: AttributeError: to_dlpack
# fails-on: jax>=0.7.0
# requires: gpu
"""On a GPU the rewritten export stays zero-copy: same device, same buffer."""
import jax
import jax.dlpack
import jax.numpy as jnp
import torch
import torch.utils.dlpack

x = jax.device_put(jnp.arange(1024, dtype=jnp.float32), jax.devices("gpu")[0])
t = torch.utils.dlpack.from_dlpack(jax.dlpack.to_dlpack(x))
assert t.device.type == "cuda", t.device
assert t.data_ptr() == x.unsafe_buffer_pointer()
assert torch.equal(t.cpu(), torch.arange(1024, dtype=torch.float32))

back = jax.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(t))
assert back.devices() == {jax.devices("gpu")[0]}
assert back.unsafe_buffer_pointer() == t.data_ptr()
