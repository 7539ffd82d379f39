# execute: yes
"""Versions compared as versions, and string tests that are exact: nothing to report."""
import jax
from packaging.version import Version

new_api = jax.__version_info__ >= (0, 7, 0)
also_new = Version(jax.__version__) >= Version("0.7")
exactly = jax.__version__ == "0.4.30"
minor = int(jax.__version__.split(".")[1]) >= 7
series = jax.__version__.startswith("0.4.")
same_part = jax.__version__.split(".")[0] == "0"
assert new_api == also_new
assert series == (jax.__version_info__[:2] == (0, 4))
assert same_part and minor == (jax.__version_info__[1] >= 7) and not (exactly and new_api)
