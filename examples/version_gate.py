"""Gates on JAX's version compared as a string (JAX007; its fix is unsafe: `--unsafe-fixes`).

"0.10.2" >= "0.5.3" is False: strings compare character by character.
"""
import jax
import jax.numpy as jnp


def has_typeof() -> bool:
    return jax.__version__ >= "0.5.3"  # jax.typeof arrived in 0.5.3


if __name__ == "__main__":
    x = jnp.ones(3)
    assert has_typeof() == hasattr(jax, "typeof"), "the gate disagrees with the API it guards"
    print(jax.typeof(x) if has_typeof() else x.aval)
