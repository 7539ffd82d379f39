"""A backend's family (issue 54, backend method pairs): the sibling backends whose ``to_dlpack``
results a dispatcher hands to this backend's ``from_dlpack`` are found through imports, as Python
resolves them, wherever they lie in the project (PhiML keeps each backend in a subpackage of its
own), never by a shared folder or name."""

from __future__ import annotations

from test_cross_module import messages, write

JAX_BACKEND = """\
from jax import dlpack


class JaxBackend:
    def to_dlpack(self, x):
        return dlpack.to_dlpack(x)

    def from_dlpack(self, x):
        return dlpack.from_dlpack(x)
"""
TORCH_BACKEND = """\
import torch


class TorchBackend:
    def to_dlpack(self, t):
        return torch.utils.dlpack.to_dlpack(t)

    def from_dlpack(self, c):
        return torch.utils.dlpack.from_dlpack(c)
"""
DISPATCH = """\
def convert(tensor, source, target):
    return target.from_dlpack(source.to_dlpack(tensor))
"""


def _cited(root) -> list[str]:
    return [m for m in messages(root, "JAX005") if "TorchBackend.to_dlpack" in m]


def test_a_sibling_in_another_subpackage_is_found_through_the_registrys_imports(tmp_path):
    registry = DISPATCH + (
        "\n\ndef get(name):\n"
        "    if name == 'jax':\n"
        "        from .jax.backend import JaxBackend\n\n"
        "        return JaxBackend()\n"
        "    from .torch.backend import TorchBackend\n\n"
        "    return TorchBackend()\n"
    )
    files = {
        "lib/__init__.py": "", "lib/registry.py": registry, "lib/jax/__init__.py": "",
        "lib/jax/backend.py": JAX_BACKEND, "lib/torch/__init__.py": "", "lib/torch/backend.py": TORCH_BACKEND,
    }
    [cited] = _cited(write(tmp_path / "proj", files))
    assert "`lib/torch/backend.py` line 6" in cited


def test_a_backend_in_another_folder_that_nothing_links_is_no_sibling(tmp_path):
    """The folder no longer bounds the family, so the import links must: a torch backend of an
    unrelated package elsewhere in the tree is not this JAX backend's sibling."""
    files = {
        "lib/__init__.py": "", "lib/registry.py": "from .jax.backend import JaxBackend  # noqa: F401\n\n\n" + DISPATCH,
        "lib/jax/__init__.py": "", "lib/jax/backend.py": JAX_BACKEND,
        "other/__init__.py": "", "other/torch/__init__.py": "", "other/torch/backend.py": TORCH_BACKEND,
    }
    root = write(tmp_path / "proj", files)
    assert messages(root, "JAX005"), "the JAX backend's own to_dlpack is still reported"
    assert _cited(root) == []


RUNTIME_TORCH = """\
from typing import Any

torchlib: Any


class TorchBackend:
    def __init__(self):
        global torchlib
        import torch

        torchlib = torch

    def to_dlpack(self, a):
        return {module}.to_dlpack(a)

    def from_dlpack(self, a):
        return torchlib.utils.dlpack.from_dlpack(a)
"""
ONE_FOLDER_REGISTRY = "from .jax_side import JaxBackend\nfrom .torch_side import TorchBackend\n\n\n" + DISPATCH


def _family_findings(tmp_path, module: str) -> list[str]:
    files = {"pkg/__init__.py": "", "pkg/registry.py": ONE_FOLDER_REGISTRY, "pkg/jax_side.py": JAX_BACKEND,
             "pkg/torch_side.py": RUNTIME_TORCH.format(module=module)}
    return [m for m in messages(write(tmp_path / "proj", files), "JAX005") if "TorchBackend.to_dlpack" in m]


def test_torch_bound_at_run_time_is_torch_by_the_path_under_it(tmp_path):
    """tensorcircuit's torch backend binds `torchlib` in its constructor: no import names it, but
    `torchlib.utils.dlpack.to_dlpack` is torch's producer's path under it, so its capsules get the
    torch conversion."""
    [found] = _family_findings(tmp_path, "torchlib.utils.dlpack")
    assert "becomes a torch tensor first" in found


def test_a_path_no_producer_has_is_reported_with_advice(tmp_path):
    [found] = _family_findings(tmp_path, "torchlib.backend.dlpack")
    assert "becomes a torch tensor first" not in found
    assert "convert that capsule with its own library first" in found


TF_BACKEND = """\
import tensorflow as tf


class TFBackend:
    def to_dlpack(self, t):
        return tf.experimental.dlpack.to_dlpack(t)

    def from_dlpack(self, c):
        return tf.experimental.dlpack.from_dlpack(c)
"""


def test_a_torch_sibling_is_chosen_over_one_listed_before_it(tmp_path):
    """PhiML's backends: tensorflow/ sorts before torch/. torch, which the conversion uses, takes
    any library's capsule, so a family with a torch sibling gets the conversion whatever other
    siblings it has or the order their files are read in."""
    registry = "from .a_tf import TFBackend\nfrom .jax_side import JaxBackend\nfrom .torch_side import TorchBackend\n\n\n"
    files = {"pkg/__init__.py": "", "pkg/registry.py": registry + DISPATCH, "pkg/jax_side.py": JAX_BACKEND,
             "pkg/a_tf.py": TF_BACKEND, "pkg/torch_side.py": TORCH_BACKEND}
    found = [m for m in messages(write(tmp_path / "proj", files), "JAX005") if "is what the backends hand" in m]
    assert len(found) == 1
    assert "`TorchBackend.to_dlpack`" in found[0] and "becomes a torch tensor first" in found[0]


TF_BACKEND = """\
import tensorflow as tf


class TFBackend:
    def to_dlpack(self, t):
        return tf.experimental.dlpack.to_dlpack(t)

    def from_dlpack(self, capsule):
        return tf.experimental.dlpack.from_dlpack(capsule)
"""


def _fixed(root, relative: str) -> str:
    from test_cli import invoke

    invoke(["run", "--no-cache", "--unsafe-fixes", "--select", "JAX005", str(root)])
    return (root / relative).read_text()


def test_a_sibling_that_takes_only_capsules_keeps_the_capsule_its_siblings_return(tmp_path):
    # H6's miss D (tum-pbs/PhiML): with a TensorFlow backend in the family, whose from_dlpack takes
    # only capsules, the JAX backend's to_dlpack returning the array would break JAX -> TF. It
    # returns `x.__dlpack__()` as PhiML's maintainers did; torch and TF take the capsule, and the JAX
    # backend's from_dlpack makes a capsule a torch tensor first.
    files = {"lib/__init__.py": "", "lib/registry.py": DISPATCH + "\nfrom . import jax_backend, tf_backend, torch_backend\n",
             "lib/jax_backend.py": JAX_BACKEND, "lib/torch_backend.py": TORCH_BACKEND, "lib/tf_backend.py": TF_BACKEND}
    fixed = _fixed(write(tmp_path / "proj", files), "lib/jax_backend.py")
    assert "return x.__dlpack__()" in fixed and "return x\n" not in fixed, fixed


def test_without_such_a_sibling_the_array_is_returned(tmp_path):
    files = {"lib/__init__.py": "", "lib/registry.py": DISPATCH + "\nfrom . import jax_backend, torch_backend\n",
             "lib/jax_backend.py": JAX_BACKEND, "lib/torch_backend.py": TORCH_BACKEND}
    fixed = _fixed(write(tmp_path / "proj", files), "lib/jax_backend.py")
    assert "return x\n" in fixed and "__dlpack__()" not in fixed, fixed
