"""A name rebound to its capsule where some later read still sees the capsule: a branch
that may skip the consumer, a loop that hands the capsule to the next turn, a `continue`
that skips the rebinding, a handler that runs after a failed consumer. Passing the tensor
itself would change what those reads get, so each is reported and left as it is."""
import jax.dlpack
import torch
import torch.utils.dlpack


def maybe_to_jax(x, to_jax):
    x = torch.utils.dlpack.to_dlpack(x)
    if to_jax:
        x = jax.dlpack.from_dlpack(x)
    return x


def pipelined(tensors):
    out = []
    x = None
    for t in tensors:
        if x is not None:
            out.append(jax.dlpack.from_dlpack(x))
        x = torch.utils.dlpack.to_dlpack(t)
    return out, x


def skipping(tensors):
    for x in tensors:
        x = torch.utils.dlpack.to_dlpack(x)
        if x is None:
            continue
        x = jax.dlpack.from_dlpack(x)
    return x


def tolerant(x):
    try:
        x = torch.utils.dlpack.to_dlpack(x)
        x = jax.dlpack.from_dlpack(x)
    except RuntimeError as error:  # e.g. a CUDA tensor on a CPU-only JAX
        print("DLPack hand-off failed:", error)
    return x
