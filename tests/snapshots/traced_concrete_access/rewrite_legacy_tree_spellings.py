# expect: ConcretizationTypeError: unsafe_buffer_pointer
# requires: jax<0.6.0
"""`jax.tree_leaves` and `jax.tree_flatten`, spellings JAX 0.4.30 to 0.5 still have, give the
leaves of a traced tree as `jax.tree.leaves` does: the accesses come from the parameters."""
import jax
import jax.numpy as jnp

ADDRESSES = []


@jax.jit
def sgd(params, grads, lr):
    for leaf in jax.tree_leaves(params):
        ADDRESSES.append(leaf.unsafe_buffer_pointer())
    ADDRESSES.append(len([g.on_device_size_in_bytes() for g in jax.tree_flatten(grads)[0]]))
    return jax.tree_map(lambda p, g: p - lr * g, params, grads)


params = {"w": jnp.ones(3), "b": jnp.zeros(2)}
grads = {"w": jnp.full(3, 2.0), "b": jnp.ones(2)}
out = sgd(params, grads, 0.5)
assert jnp.allclose(out["w"], 0.0) and jnp.allclose(out["b"], -0.5)
assert ADDRESSES == [params["b"].unsafe_buffer_pointer(), params["w"].unsafe_buffer_pointer(), 2]
