# execute: yes
"""Near misses of report_class_overrides: an override that computes only with jax, one that
the jitted method never calls (only an eager method does), one given a static argument, a
subclass that replaces the jitted method with an eager one (its hook sees concrete arrays),
and a traced method whose `self` is rebound before the call."""
import functools

import jax
import jax.numpy as jnp
import numpy as np


class Trainer:
    @functools.partial(jax.jit, static_argnums=0)
    def step(self, x):
        return self.on_batch(x) * 2

    def on_batch(self, x):
        return x


class Scaled(Trainer):
    def on_batch(self, x):
        return x * 3  # nothing concrete: traces


class Eager(Trainer):
    def step(self, x):  # not jitted: `on_batch` gets the concrete array
        return self.on_batch(x) * 2

    def on_batch(self, x):
        return jnp.asarray(np.asarray(x))


class Exporter:
    @functools.partial(jax.jit, static_argnums=0)
    def step(self, x):
        return x + 1

    def export(self, x):
        return self.to_host(x)  # eager: nothing traced calls it

    def to_host(self, x):
        return x


class NumpyExporter(Exporter):
    def to_host(self, x):
        return np.asarray(x)


class Sized:
    @functools.partial(jax.jit, static_argnums=(0, 2))
    def step(self, x, table):
        return x * self.total(table)

    def total(self, table):
        return 1


class NumpySized(Sized):
    def total(self, table):
        return int(np.asarray(table).sum())  # `table` is static: a concrete tuple


class Delegating:
    @functools.partial(jax.jit, static_argnums=0)
    def step(self, x):
        self = PLAIN  # `self.on_batch` below is no longer this class's
        return self.on_batch(x)


class Plain:
    def on_batch(self, x):
        return x + 1


class HostPlain(Delegating):
    def on_batch(self, x):
        return np.asarray(x)


PLAIN = Plain()
ones = jnp.ones(3)
assert Scaled().step(ones).tolist() == [6.0, 6.0, 6.0]
assert Eager().step(ones).tolist() == [2.0, 2.0, 2.0]
assert NumpyExporter().step(ones).tolist() == [2.0, 2.0, 2.0]
assert NumpyExporter().export(ones).tolist() == [1.0, 1.0, 1.0]
assert NumpySized().step(ones, (1, 2)).tolist() == [3.0, 3.0, 3.0]
assert HostPlain().step(ones).tolist() == [2.0, 2.0, 2.0]
