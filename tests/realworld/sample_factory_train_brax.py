# ruff: noqa -- real code, kept in its own style
# source: github.com/alex-petrenko/sample-factory sf_examples/brax/train_brax.py
# commit: 7008461c2c36ce576eb02b29fa1b8367830a6f26
# Reproduction, not a copy: the two bridging functions re-typed with the same calls, data flow
# and import spellings (this workplace keeps fetched code out of commits); the gym/brax env class
# that calls them is left out. Both import from jax._src.dlpack inside the function and rebind
# one name tensor -> capsule -> tensor.
import torch.utils.dlpack as tpack


def jax_to_torch(tensor):
    # noinspection PyProtectedMember
    from jax._src.dlpack import to_dlpack

    tensor = to_dlpack(tensor)
    tensor = tpack.from_dlpack(tensor)
    return tensor


def torch_to_jax(tensor):
    # noinspection PyProtectedMember
    from jax._src.dlpack import from_dlpack

    tensor = tpack.to_dlpack(tensor)
    tensor = from_dlpack(tensor)
    return tensor
