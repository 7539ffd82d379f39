# expect: TracerArrayConversionError: numpy.ndarray
"""A traced method's `self.on_batch(x)` runs the `on_batch` of the instance's class: an override
in a subclass of the file (a grandchild's too, or one of a base that only declares the hook) runs
in the trace whenever an instance of that subclass calls `step`, and so do a sibling method
`self.scale(x)` and the base's method `super().prepare(x)` reaches. Each access is reported in the
method that makes it, naming the traced method it runs under; none is fixed (the access would
have to move out of `step`, which is not where it is written)."""
import functools

import jax
import jax.numpy as jnp
import numpy as np

POINTERS = []


class Trainer:
    @functools.partial(jax.jit, static_argnums=0)
    def step(self, x):
        return self.on_batch(x) * 2

    def on_batch(self, x):
        return x


class NumpyTrainer(Trainer):
    def on_batch(self, x):
        return jnp.asarray(np.asarray(x))


class PointerTrainer(NumpyTrainer):
    # Inherits `step` through NumpyTrainer: its own `on_batch` runs in that trace.
    def on_batch(self, x):
        POINTERS.append(x.unsafe_buffer_pointer())
        return x


class Hooked:
    @functools.partial(jax.jit, static_argnums=0)
    def run(self, x):
        return self.hook(x)

    def hook(self, x):
        raise NotImplementedError


class ListHook(Hooked):
    def hook(self, x):
        return jnp.asarray(x.tolist())


class Base:
    def prepare(self, x):
        return x.tolist()


class Child(Base):
    @functools.partial(jax.jit, static_argnums=0)
    def run(self, x):
        super().prepare(x)
        return self.scale(x)

    def prepare(self, x):
        return x

    def scale(self, x):
        return x * x.item()


NumpyTrainer().step(jnp.ones(3))
