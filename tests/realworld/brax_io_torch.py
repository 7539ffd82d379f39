# ruff: noqa -- real code, kept in its own style
# source: github.com/google/brax brax/io/torch.py
# commit: 1396cd13ba6657b0d94dee5c0a10a62c6e3f91e4
# Reproduction, not a copy: the bridging functions re-typed with the same calls, data flow and
# import spellings (this workplace keeps fetched code out of commits); imports reduced to jax/torch.
# The file imports jaxlib.xla_extension.DeviceArray, gone from current jaxlib: jax.Array stands in.
from collections import abc
from functools import singledispatch
from typing import Any, Dict, Union

import jax
import torch
from jax._src import dlpack as jax_dlpack
from torch import Tensor
from torch.utils import dlpack as torch_dlpack

Device = Union[str, torch.device]


@singledispatch
def torch_to_jax(value: Any) -> Any:
    return value


@torch_to_jax.register(Tensor)
def _tensor_to_jax(value: Tensor) -> jax.Array:
    tensor = torch_dlpack.to_dlpack(value)
    tensor = jax_dlpack.from_dlpack(tensor)
    return tensor


@torch_to_jax.register(abc.Mapping)
def _torch_dict_to_jax(value: Dict[str, Any]) -> Dict[str, Any]:
    return type(value)(**{k: torch_to_jax(v) for k, v in value.items()})


@singledispatch
def jax_to_torch(value: Any, device: Device = None) -> Any:
    return value


@jax_to_torch.register(jax.Array)
def _devicearray_to_tensor(value: jax.Array, device: Device = None) -> Tensor:
    dpack = jax_dlpack.to_dlpack(value)
    tensor = torch_dlpack.from_dlpack(dpack)
    if device:
        return tensor.to(device=device)
    return tensor


@jax_to_torch.register(abc.Mapping)
def _jax_dict_to_torch(value: Dict[str, Any], device: Device = None) -> Dict[str, Any]:
    return type(value)(**{k: jax_to_torch(v, device=device) for k, v in value.items()})
