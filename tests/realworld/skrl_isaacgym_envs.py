# ruff: noqa -- real code, kept in its own style
# source: github.com/Toni-SM/skrl skrl/envs/wrappers/jax/isaacgym_envs.py
# commit: 30a649670c03c6bbe5cf9f9917fbc939d9d724d4
# Reproduction, not a copy: the bridging functions re-typed with the same calls, data flow and
# import spellings (this workplace keeps fetched code out of commits); imports reduced to jax/torch
# (the wrapper classes, which only call these two, and skrl's logger are left out).
import jax
import jax.dlpack as jax_dlpack
import torch
import torch.utils.dlpack as torch_dlpack


# a DLPack tensor on GPU cannot be imported by a CPU-only JAX, hence the host copy below
_CPU = jax.devices()[0].device_kind.lower() == "cpu"
if _CPU:
    pass  # the original logs a warning here

def _jax2torch(array, device, from_jax=True):
    if from_jax:
        return torch_dlpack.from_dlpack(jax_dlpack.to_dlpack(array)).to(device=device)
    return torch.tensor(array, device=device)

def _torch2jax(tensor, to_jax=True):
    if to_jax:
        return jax_dlpack.from_dlpack(torch_dlpack.to_dlpack(tensor.contiguous().cpu() if _CPU else tensor.contiguous()))
    return tensor.cpu().numpy()
