"""Values of unknown origin fed to JAX's DLPack consumers: tensors or capsules? Left alone by
default (issue 54, decision 2); with `report-unknown-origin = true` each is reported with what to
do, since JAX 0.7.2+ raises TypeError on a capsule (tests/test_removed_dlpack_api.py)."""
import jax
import jax.dlpack
import jax.numpy as jnp
from jax._src.dlpack import from_dlpack as _from_dlpack


def torch_to_jax(x):
    return jax.dlpack.from_dlpack(x)


def tree_t2j(*tensors):
    return [jnp.from_dlpack(t) for t in tensors]


def batch_to_jax(batch):
    return {"obs": jax.dlpack.from_dlpack(batch["obs"]), "reward": jax.dlpack.from_dlpack(batch["reward"])}


class SharedBuffer:
    def __init__(self, handle):
        self.handle = handle

    def as_jax(self):
        return jax.dlpack.from_dlpack(self.handle)


def from_worker(queue):
    return _from_dlpack(queue.get())


def convert_tree(tree):
    return jax.tree_util.tree_map(lambda leaf: jax.dlpack.from_dlpack(leaf), tree)


def from_worker_buffer(worker):
    buffer = worker.fetch()
    return jax.dlpack.from_dlpack(buffer)
