# execute: yes
"""A concrete-only access that runs only where a test showed the value is no tracer: the body of
`if not isinstance(y, core.Tracer)`, the `else` of `if isinstance(x, core.Tracer)`, the code
after `if isinstance(y, core.Tracer): return y`, the right of `not isinstance(x, Tracer) and
...`, the body of `if isinstance(x, (np.ndarray, np.generic, float))` (no tracer is one). Inside a trace the test sends the tracer past the access (equinox's `error_if` checks a
predicate so, at trace time when it can). Also a test repeated on every pass of a loop, whatever
the loop binds after it. Nothing is reported; each function runs under `jax.jit`."""
import jax
import jax.numpy as jnp
import numpy as np
from jax import core
from jax.core import Tracer


def double(x):
    return x * 2


@jax.jit
def in_body(x):
    y = double(x)
    if not isinstance(y, core.Tracer):
        y = y.item()
    return y


@jax.jit
def after_exit(x):
    y = double(x)
    if isinstance(y, jax.core.Tracer):
        return y
    return np.asarray(y)


@jax.jit
def in_else(x):
    if isinstance(x, (Tracer, int)):
        return x
    else:
        return x.item()


@jax.jit
def in_conjunction(x):
    return jnp.where(not isinstance(x, core.Tracer) and x.item() > 0, 1.0, x)


@jax.jit
def after_either_exit(x):
    if isinstance(x, core.Tracer) or x is None:
        return x
    return x.tolist()


@jax.jit
def tested_each_pass(x):
    y = double(x)
    for _ in range(2):
        if not isinstance(y, core.Tracer):
            print(y.item())
        y = y + 1
    return y


@jax.jit
def host_types_only(x):
    if isinstance(x, (np.ndarray, np.generic, float)):
        x = x.item()  # a concrete array or scalar, given eagerly: never a tracer
    return x * 2


x = jnp.float32(3.0)
assert float(in_body(x)) == 6.0
assert float(after_exit(x)) == 6.0
assert float(in_else(x)) == 3.0
assert float(in_conjunction(x)) == 3.0
assert float(after_either_exit(x)) == 3.0
assert float(tested_each_pass(x)) == 8.0
assert float(host_types_only(x)) == 6.0
