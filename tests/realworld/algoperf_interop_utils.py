# ruff: noqa -- real code, kept in its own style
# source: github.com/mlcommons/algorithmic-efficiency algorithmic_efficiency/interop_utils.py
# commit: 3b38d9ec979051916147f5cc92496889c2b503dc
# Reproduction, not a copy: the bridging functions re-typed with the same calls, data flow and
# import spellings (this workplace keeps fetched code out of commits); imports reduced to jax/torch.
import jax.dlpack
import torch


def jax_to_pytorch(x, take_ownership: bool = False):
    return torch.utils.dlpack.from_dlpack(jax.dlpack.to_dlpack(x, take_ownership=take_ownership))


def pytorch_to_jax(x: torch.Tensor):
    x = x.contiguous()
    return jax.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(x))
