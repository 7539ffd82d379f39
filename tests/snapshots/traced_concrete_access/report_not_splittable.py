import functools

import jax
import jax.numpy as jnp


def log(*values):
    print(*values)


class Model:
    @staticmethod
    @jax.jit
    def forward(x):
        log(x.unsafe_buffer_pointer())
        return x * 2


@jax.jit
def release(x):
    x.delete()
    return x


@functools.partial(jax.jit, static_argnames=("debug",))
def guarded(x, debug):
    if debug:
        log(x.unsafe_buffer_pointer())
    return x + 1


@jax.jit
def with_intermediate(x):
    y = jnp.exp(x)
    log(x.unsafe_buffer_pointer(), y)
    return y


@jax.jit
def lowered(x):
    log(x.unsafe_buffer_pointer())
    return x - 1


@jax.jit
def shares_a_line(x):
    log(x.unsafe_buffer_pointer()); log(x.on_device_size_in_bytes())
    return x


@jax.jit
def reused_name(x):
    ptr = x.unsafe_buffer_pointer()
    log(ptr)
    ptr = x * 2
    return ptr


compiled = lowered.lower(jnp.ones(3)).compile()


class Recorder:
    @functools.partial(jax.jit, static_argnums=0)
    def step(self, x):
        # The trace would bake the first call's pointer into the compiled function.
        self.last = x.unsafe_buffer_pointer()
        return x + self.last
