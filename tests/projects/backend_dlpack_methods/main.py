import numpy as np

from backends.jax_backend import JaxBackend

backend = JaxBackend()
tensor = backend.convert(np.arange(6.0).reshape(2, 3))
round_trip = backend.from_dlpack(backend.to_dlpack(tensor))
np.testing.assert_array_equal(np.asarray(round_trip), np.arange(6.0).reshape(2, 3))
