# option: target-platforms=cpu,gpu,metal
"""Tests that run only on backends with DLPack (JAX's own test suite): no fallback is needed.
`jtu.run_on_devices("cpu")`, and a `setUp` or test that skips unless the device is CPU or GPU."""
import unittest

import jax.numpy as jnp
import numpy as np
import torch.utils.dlpack
from jax._src import test_util as jtu


class CpuOnly(jtu.JaxTestCase):
    @jtu.run_on_devices("cpu")
    def test_to_numpy(self):
        x = jnp.arange(3.0)
        self.assertAllClose(np.from_dlpack(x), x)

    def test_skips_itself(self):
        if not jtu.test_device_matches(["cpu", "gpu"]):
            self.skipTest("DLPack only supported on CPU and GPU")
        x = jnp.arange(3.0)
        self.assertAllClose(torch.utils.dlpack.from_dlpack(x).numpy(), x)


class CpuOrGpu(jtu.JaxTestCase):
    def setUp(self):
        super().setUp()
        if not jtu.test_device_matches(["cpu", "gpu"]):
            self.skipTest("DLPack only supported on CPU and GPU")

    def test_to_torch(self):
        x = jnp.arange(3.0)
        y = torch.utils.dlpack.from_dlpack(x)
        self.assertAllClose(y.numpy(), x)


if __name__ == "__main__":
    unittest.main()
