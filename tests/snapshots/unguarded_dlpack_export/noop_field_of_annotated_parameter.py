"""Fields that are not JAX arrays, or that no annotation describes: nothing to report."""
import dataclasses

import jax
import numpy as np
import torch


@dataclasses.dataclass
class Batch:
    images: torch.Tensor
    labels: np.ndarray
    extra: object = None


class Plain:
    pass


def to_numpy(batch: Batch, plain: Plain, name: "Batch"):
    return (
        np.from_dlpack(batch.images),
        torch.from_dlpack(batch.labels),
        torch.from_dlpack(batch.extra),
        torch.from_dlpack(plain.anything),
        jax.numpy.asarray(name.labels),
    )
