"""A library boundary that exports any JAX array it is given (JAX006, opt-in; and JAX004 for a
target that includes a TPU or a plugin backend).

`codemod run --dry-run --select ALL --unsafe-fixes examples/` shows JAX006's fix;
`--target-platforms cpu,tpu` adds JAX004's.
"""
import jax
import jax.numpy as jnp
import torch


def jax_to_torch(value: jax.Array) -> torch.Tensor:
    return torch.from_dlpack(value)


def normalized(x):
    y = jnp.asarray(x) / 10.0
    t = torch.from_dlpack(y)
    return t


if __name__ == "__main__":
    assert jax_to_torch(jnp.ones(2)).tolist() == [1.0, 1.0]
    assert normalized([10.0, 20.0]).tolist() == [1.0, 2.0]
