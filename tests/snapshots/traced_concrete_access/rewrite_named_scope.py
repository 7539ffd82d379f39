# expect: ConcretizationTypeError: unsafe_buffer_pointer
import jax
import jax.numpy as jnp

TRACE = []


@jax.jit
@jax.named_call
def attention_scores(q, k):
    TRACE.append(("q", q.unsafe_buffer_pointer()))
    return q @ k.T


@jax.jit
def layer(x, w):
    with jax.named_scope("export"):
        TRACE.append(("x", x.unsafe_buffer_pointer()))
    with jax.named_scope("matmul"):
        y = x @ w
    return jax.nn.relu(y)


q, k = jnp.ones((2, 4)), jnp.ones((3, 4))
assert jnp.allclose(attention_scores(q, k), jnp.full((2, 3), 4.0))
x, w = jnp.ones((2, 3)), -jnp.ones((3, 2))
assert jnp.allclose(layer(x, w), 0.0)
assert TRACE == [("q", q.unsafe_buffer_pointer()), ("x", x.unsafe_buffer_pointer())]
