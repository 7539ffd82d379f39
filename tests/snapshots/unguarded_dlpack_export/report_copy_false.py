"""copy=False forbids the copy a gather makes: reported, not rewritten."""
import jax
import numpy as np


def zero_copy(value: jax.Array):
    return np.from_dlpack(value, copy=False)


def expression_pointer(value: jax.Array):
    return (value + 1).unsafe_buffer_pointer()
