# ruff: noqa -- real code, kept in its own style
# source: github.com/lebrice/torch_jax_interop torch_jax_interop/to_torch.py
# commit: 03d73f142dd0f129efafe187da62787abe10d6e9
# Reproduction, not a copy: the bridging functions re-typed with the same calls, data flow and
# import spellings (this workplace keeps fetched code out of commits); imports reduced to jax/torch.
from __future__ import annotations

import collections.abc
import functools
from typing import Any

import jax
import torch
from jax import dlpack as jax_dlpack
from torch.utils import dlpack as torch_dlpack


@functools.singledispatch
def jax_to_torch(value: Any, /) -> Any:
    raise NotImplementedError(f"No registered handler for {type(value)}")


@jax_to_torch.register(type(None))
def no_op(v: Any) -> Any:
    return v


def jax_to_torch_tensor(value: jax.Array, /) -> torch.Tensor:
    dpack = jax_dlpack.to_dlpack(value)
    return torch_dlpack.from_dlpack(dpack)


jax_to_torch.register(jax.Array, jax_to_torch_tensor)


@jax_to_torch.register(collections.abc.Mapping)
def jax_to_torch_mapping(value):
    return type(value)(**{k: jax_to_torch(v) for k, v in value.items()})
