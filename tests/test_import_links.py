"""Modules are linked only through imports, as Python resolves them (issue 54): two unrelated
files of one folder that each define a backend class are no family, and a finding on one must
not cite the other's file; once a module imports both (a package's registry), they are one."""

from __future__ import annotations

from pathlib import Path

from test_cross_module import messages, write

JAX_SIDE = """\
import jax


class JaxBackend:
    def to_dlpack(self, x):
        return jax.dlpack.to_dlpack(x)

    def from_dlpack(self, x):
        return jax.dlpack.from_dlpack(x)


def move(source, target, t):
    return target.from_dlpack(source.to_dlpack(t))
"""
TORCH_SIDE = """\
import torch


class TorchBackend:
    def to_dlpack(self, t):
        return torch.utils.dlpack.to_dlpack(t)

    def from_dlpack(self, c):
        return torch.utils.dlpack.from_dlpack(c)
"""


def _cited(root: Path) -> list[str]:
    return [m for m in messages(root, "JAX005") if "torch_side.py" in m]


def test_two_scripts_of_one_folder_are_not_linked(tmp_path):
    root = write(tmp_path / "proj", {"jax_side.py": JAX_SIDE, "torch_side.py": TORCH_SIDE})
    found = messages(root, "JAX005")
    assert found, "the JAX backend's own to_dlpack is still reported"
    assert _cited(root) == []


def test_a_module_that_imports_both_links_them(tmp_path):
    registry = "from jax_side import JaxBackend\nfrom torch_side import TorchBackend\n\nBACKENDS = [JaxBackend(), TorchBackend()]\n"
    root = write(tmp_path / "proj", {"jax_side.py": JAX_SIDE, "torch_side.py": TORCH_SIDE, "registry.py": registry})
    [cited] = _cited(root)
    assert "`TorchBackend.to_dlpack` (`torch_side.py` line 6)" in cited


def test_one_importing_the_other_links_them(tmp_path):
    importer = JAX_SIDE.replace("import jax\n", "import jax\nimport torch_side  # noqa: F401\n", 1)
    root = write(tmp_path / "proj", {"jax_side.py": importer, "torch_side.py": TORCH_SIDE})
    assert len(_cited(root)) == 1


def test_a_dispatcher_counts_only_when_it_imports_the_backend(tmp_path):
    """The hand-over (`target.from_dlpack(source.to_dlpack(t))`) in a module that imports
    neither backend, though it lies beside them, is no dispatcher of theirs."""
    backend = JAX_SIDE.split("\n\ndef move")[0] + "\n"
    dispatcher = "def move(source, target, t):\n    return target.from_dlpack(source.to_dlpack(t))\n"
    files = {"pkg/__init__.py": "", "pkg/jax_side.py": backend, "pkg/torch_side.py": TORCH_SIDE,
             "pkg/registry.py": "from .jax_side import JaxBackend\nfrom .torch_side import TorchBackend\n",
             "pkg/dispatch.py": dispatcher}
    root = write(tmp_path / "proj", files)
    assert _cited(root) == []
    (root / "pkg" / "dispatch.py").write_text("from . import registry  # noqa: F401\n\n" + dispatcher)
    write(root, {})
    assert len(_cited(root)) == 1
