# expect: AttributeError: to_dlpack
# fails-on: jax>=0.7.0
"""A capsule variable the code frees with `del` keeps its name (now holding the array), so the
`del` still has something to delete; dropping it would leave an UnboundLocalError behind. A
later plain rebinding (`dl = None`) needs no binding before it: that variable is dropped."""
import jax.numpy as jnp
import torch.utils.dlpack as torchdl
from jax import dlpack as jaxdl


def j2t(x):
    dl = jaxdl.to_dlpack(x)
    res = torchdl.from_dlpack(dl)
    del dl
    return res


def j2t_reset(x):
    dl = jaxdl.to_dlpack(x)
    res = torchdl.from_dlpack(dl)
    dl = None
    return res, dl


assert j2t(jnp.arange(3.0)).tolist() == [0.0, 1.0, 2.0]
assert j2t_reset(jnp.ones(2))[0].tolist() == [1.0, 1.0]
