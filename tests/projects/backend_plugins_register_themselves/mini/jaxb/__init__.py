from ..core import BACKENDS
from ._jax_backend import JaxBackend

JAX = JaxBackend()
BACKENDS.append(JAX)
