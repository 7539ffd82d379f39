"""A simulated plugin backend for the JAX004 execution cases (imported by the case scripts).

``with plugin_backend():`` makes JAX behave, inside the block, as on a backend without DLPack
(``metal``): every array off the host's CPU device refuses ``__dlpack_device__`` with the
seed's ``BufferError`` and ``__dlpack__`` and the buffer protocol as XLA does (a runtime error,
which ``except BufferError`` does not catch). The simulation is ``platform_sim``'s, held to the
seed by tests/test_platform_sim.py.
"""

from platform_sim import simulated


def plugin_backend():
    return simulated("metal")
