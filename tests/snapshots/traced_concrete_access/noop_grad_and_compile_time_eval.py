# execute: yes
"""Correct code: `.item()` and `.nonzero()` under differentiation alone (a JVP tracer's primal
is concrete), and values computed inside `jax.ensure_compile_time_eval()` from constants,
which are concrete arrays even inside `jax.jit`."""
import jax
import jax.numpy as jnp


def f(x):
    if x.astype(bool).item():
        return x**2
    return x


assert jax.grad(f)(2.0) == 4.0
assert jax.value_and_grad(f)(2.0)[1] == 4.0


@jax.jit
def scaled(x):
    with jax.ensure_compile_time_eval():
        steps = jnp.arange(4)
        n = steps.sum().item()
        sizes = steps.tolist()
    return x * n + len(sizes)


assert float(scaled(jnp.float32(1.0))) == 10.0
