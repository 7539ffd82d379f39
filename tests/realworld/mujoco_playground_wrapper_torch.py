# ruff: noqa -- real code, kept in its own style
# source: github.com/google-deepmind/mujoco_playground mujoco_playground/_src/wrapper_torch.py
# commit: 1daeb5735077e157d6cc57722d2cca9ac8a4c427 (there already migrated by the maintainers; this
# is the capsule form those two helpers had before, with their function-local imports)
# Reproduction, not a copy: the bridging functions re-typed with the same calls, data flow and
# import spellings (this workplace keeps fetched code out of commits); imports reduced to jax/torch.
import jax
import jax.dlpack


def _jax_to_torch(tensor):
    import torch.utils.dlpack as tpack

    tensor = tpack.from_dlpack(jax.dlpack.to_dlpack(tensor))
    return tensor


def _torch_to_jax(tensor):
    import torch.utils.dlpack as tpack
    from jax.dlpack import from_dlpack

    tensor = from_dlpack(tpack.to_dlpack(tensor))
    return tensor
