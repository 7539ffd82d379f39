# expect: ConcretizationTypeError: unsafe_buffer_pointer
import jax
import jax.numpy as jnp

ADDRESSES = []


@jax.jit
def sgd(params, grads, lr):
    # Register every parameter buffer with the allocator before the update.
    for leaf in jax.tree.leaves(params):
        ADDRESSES.append(leaf.unsafe_buffer_pointer())
    ADDRESSES.append(len([g.on_device_size_in_bytes() for g in jax.tree_util.tree_leaves(grads)]))
    return jax.tree.map(lambda p, g: p - lr * g, params, grads)


params = {"w": jnp.ones(3), "b": jnp.zeros(2)}
grads = {"w": jnp.full(3, 2.0), "b": jnp.ones(2)}
out = sgd(params, grads, 0.5)
assert jnp.allclose(out["w"], 0.0) and jnp.allclose(out["b"], -0.5)
assert ADDRESSES == [params["b"].unsafe_buffer_pointer(), params["w"].unsafe_buffer_pointer(), 2]
