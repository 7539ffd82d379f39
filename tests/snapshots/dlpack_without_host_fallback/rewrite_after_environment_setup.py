# option: target-platforms=cpu,gpu,metal
# expect: BufferError: __dlpack__ device only supported for CPU, GPU and TPU pinned host
"""The module sets its environment up before importing jax (XLA_FLAGS, sys.path, warnings):
the import the fix needs, and its helper, go below that set-up, never above it."""
import os
import sys
import warnings

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
sys.path.insert(0, os.path.dirname(__file__))
warnings.filterwarnings("ignore", category=DeprecationWarning)

import jax.numpy as jnp
import torch
from plugin_backend import plugin_backend


def to_torch(x):
    t = torch.from_dlpack(x)
    return t


def scaled(x):
    return torch.from_dlpack(x * 2) + 1


x = jnp.arange(3.0)
with plugin_backend():
    assert to_torch(x).tolist() == [0.0, 1.0, 2.0]
    assert scaled(x).tolist() == [1.0, 3.0, 5.0]
