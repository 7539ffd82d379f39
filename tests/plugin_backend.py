"""A simulated plugin backend for the JAX004 execution cases (imported by the case scripts)."""

import contextlib

import jax.numpy as jnp


@contextlib.contextmanager
def plugin_backend():
    """jax.Array exports fail the way they do on a backend without DLPack (the seed's error)."""
    array_type = type(jnp.zeros(()))
    saved = {name: array_type.__dict__[name] for name in ("__dlpack__", "__dlpack_device__")}

    def refuse(self, *args, **kwargs):
        raise BufferError("__dlpack__ device only supported for CPU, GPU and TPU pinned host, got platform: METAL")

    for name in saved:
        setattr(array_type, name, refuse)
    try:
        yield
    finally:
        for name, method in saved.items():
            setattr(array_type, name, method)
