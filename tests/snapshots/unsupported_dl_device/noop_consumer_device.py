# execute: yes
"""A consumer asking for its own device, the DLPack protocol's intended use: the device is a
real array's, so JAX either exports there or raises the BufferError the consumer handles."""
import jax.numpy as jnp
import torch


class Consumer:
    def __init__(self):
        self.buffer = torch.zeros(3)

    def take(self, array):
        capsule = array.__dlpack__(dl_device=self.buffer.__dlpack_device__())
        return torch.utils.dlpack.from_dlpack(capsule)


def to_consumer_device(array, consumer: torch.Tensor):
    device = consumer.__dlpack_device__()
    return torch.from_dlpack(array.__dlpack__(dl_device=device))


assert Consumer().take(jnp.arange(3.0)).tolist() == [0.0, 1.0, 2.0]
assert to_consumer_device(jnp.arange(2.0), torch.ones(1)).tolist() == [0.0, 1.0]
