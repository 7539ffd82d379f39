# expect: RuntimeError: needs jax 0.4.4 or newer
# fails-on: jax<0.5
# fails-on: jax>=0.10
"""Version strings compared as strings: "0.4.30" < "0.4.4" and "0.10.2" < "0.7" are True,
"0.10.2"[:3] is "0.1" and "10" >= "7" is False. Each becomes a comparison of the version
tuple, `jax.__version_info__` (jaxlib: `jaxlib.version.__version_info__`)."""
import jax
import jaxlib
from jax import __version__ as jax_version


def release(text):
    return tuple(int(part) for part in text.split(".")[:3])


if jax.__version__ < "0.4.4":
    raise RuntimeError(f"needs jax 0.4.4 or newer, found {jax.__version__}")

installed = release(jax.__version__)
is_04 = jax.__version__[:3] == "0.4"
minor_at_least_7 = jax.__version__.split(".")[1] >= "7"
at_least_07 = jax.__version__.split(".")[:2] >= ["0", "7"]
new_api = (jax_version >= "0.7.0")
lib_new_enough = "0.4.4" <= jaxlib.__version__

assert is_04 == (installed[:2] == (0, 4))
assert minor_at_least_7 == (installed[1] >= 7)
assert at_least_07 == (installed[:2] >= (0, 7))
assert new_api == (installed >= (0, 7, 0))
assert lib_new_enough
