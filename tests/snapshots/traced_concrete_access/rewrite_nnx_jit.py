# expect: ConcretizationTypeError: unsafe_buffer_pointer
# requires: flax
import jax.numpy as jnp
from flax import nnx

SEEN = []


@nnx.jit
def predict(model, x):
    SEEN.append(x.unsafe_buffer_pointer())
    return model(x)


model = nnx.Linear(3, 2, rngs=nnx.Rngs(0))
x = jnp.ones((1, 3))
assert jnp.allclose(predict(model, x), model(x))
assert SEEN == [x.unsafe_buffer_pointer()] and SEEN[0] > 0
