# expect: ConcretizationTypeError: unsafe_buffer_pointer
# requires: equinox
import equinox as eqx
import jax
import jax.numpy as jnp

POINTERS = []


@eqx.filter_jit
def forward(model, x, training=False):
    # The profiler hook wants the input's address.
    POINTERS.append(x.unsafe_buffer_pointer())
    return model(x) if not training else model(x) * 0.5


model = eqx.nn.Linear(3, 2, key=jax.random.PRNGKey(0))
x = jnp.ones(3)
assert jnp.allclose(forward(model, x), model(x))
assert jnp.allclose(forward(model, x, training=True), model(x) * 0.5)
assert POINTERS == [x.unsafe_buffer_pointer()] * 2 and POINTERS[0] > 0
