from ._jax_backend import JaxBackend

JAX = JaxBackend()
