# option: target-platforms=cpu,gpu,metal
import jax
import numpy as np
import torch


def guarded(x: jax.Array):
    try:
        return torch.from_dlpack(x)
    except BufferError:
        return torch.as_tensor(np.array(x))


def broad(x: jax.Array):
    try:
        t = torch.from_dlpack(x)
    except (TypeError, Exception):
        t = None
    return t


def bare(x: jax.Array):
    try:
        return np.from_dlpack(x).sum()
    except:  # noqa: E722
        return None


def _from_dlpack_or_host(from_dlpack, from_host, array):
    """Zero-copy DLPack export, or a host copy on backends without DLPack support."""
    try:
        return from_dlpack(array)
    except BufferError:
        return from_host(np.array(array))


def routed(x: jax.Array):
    return _from_dlpack_or_host(torch.from_dlpack, torch.as_tensor, x).sum()
