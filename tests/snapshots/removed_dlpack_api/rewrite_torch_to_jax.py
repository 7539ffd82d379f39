# expect: TypeError: must have __dlpack__
# fails-on: jax>=0.7.2
import jax.dlpack
import jax.numpy as jnp
import torch
import torch.utils.dlpack

weights = torch.arange(6.0, requires_grad=True)
# The old capsule path accepted tensors that require grad; the rewrite must too.
w = jax.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(weights))
strided = jax.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(torch.arange(6.0).reshape(2, 3).T))
assert jnp.array_equal(w, jnp.arange(6.0))
assert strided.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
# A tensor already made contiguous, or detached, gets only the call it lacks.
grad_t = torch.arange(6.0, requires_grad=True).reshape(2, 3).T
c = jax.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(grad_t.contiguous()))
d = jax.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(grad_t.detach()))
assert c.tolist() == d.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
