"""JAX's own tests of the concretization errors: the access runs where the test expects
ConcretizationTypeError (or its base TypeError, or AttributeError for the attributes a tracer
hides). A function used eagerly outside the block (`f(x)`) works there: only its traced uses
count."""
import unittest

import jax
import jax.numpy as jnp
import numpy as np
from jax import errors


class TracerTest(unittest.TestCase):
    def test_jit_item(self):
        def f(x):
            return x.item()

        x = jnp.array(1.0)
        self.assertEqual(f(x), x)
        with self.assertRaisesRegex(errors.ConcretizationTypeError, "Abstract tracer value"):
            jax.jit(f)(x)

    def test_tobytes(self):
        v = np.arange(12, dtype=np.int32)
        f = jax.jit(lambda x: x.tobytes())
        with self.assertRaisesRegex(TypeError, "tobytes"):
            f(v)

    def test_sharding_attribute(self):
        @jax.jit
        def f(x):
            with self.assertRaisesRegex(AttributeError, "typeof"):
                x.sharding

        f(jnp.arange(2.0))

    def test_call_form(self):
        g = jax.jit(lambda x: x.tolist())
        self.assertRaises(errors.ConcretizationTypeError, g, jnp.ones(3))
