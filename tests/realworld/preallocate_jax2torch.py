# ruff: noqa -- real code, kept in its own style
# source: repository not named by the code index (file id 26011216791 in the search tool);
# found with find_string "jax.dlpack.to_dlpack(x, take_ownership=False)"; two copies in the index
# Reproduction, not a copy: the bridging functions re-typed with the same calls, data flow and
# import spellings (this workplace keeps fetched code out of commits); imports reduced to jax/torch.
import os

import jax.dlpack
from torch.utils.dlpack import from_dlpack, to_dlpack

if "XLA_PYTHON_CLIENT_PREALLOCATE" not in os.environ and "XLA_PYTHON_CLIENT_MEM_FRACTION" not in os.environ:
    pass  # the original prints a warning here


def jax2torch(x):
    x = jax.dlpack.to_dlpack(x, take_ownership=False)
    x = from_dlpack(x)
    return x


def torch2jax(x):
    x = to_dlpack(x)
    x = jax.dlpack.from_dlpack(x)
    return x
