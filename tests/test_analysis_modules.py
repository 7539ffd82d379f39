"""The module map under the project-wide analysis: a file list in, Python's own answers out.

Where it matters, the expected answer is not typed but asked of CPython itself: the same tree is
laid out on disk and imported in a subprocess, and the module it loads must be the file the map
names."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from jax_codemod.analysis.modules import ModuleMap, Project

SRC_LAYOUT = {
    "pyproject.toml": "",
    "src/pkg/__init__.py": "from .core import bridge\nfrom . import util as helpers\n",
    "src/pkg/core.py": "from .util import place\nfrom ..outside import nothing\ndef bridge(x):\n    return x\n",
    "src/pkg/util.py": "import numpy as np\ndef place(x):\n    return x\n",
    "src/pkg/sub/__init__.py": "",
    "src/pkg/sub/deep.py": "from ...pkg import bridge\nfrom .. import core\n",
    "src/nspkg/mod.py": "VALUE = 1\n",
    "tests/helpers.py": "",
    "tests/test_a.py": "import helpers\nfrom pkg.core import bridge\n",
    "scripts/run.py": "from pkg import bridge as b\n",
}


def _map(tree: dict[str, str]) -> ModuleMap:
    return ModuleMap.of(tree)


def _project(tree: dict[str, str]) -> Project:
    return Project.of({path: ast.parse(text) for path, text in tree.items() if path.endswith(".py")})


def test_names_under_src_layout_and_namespace_packages():
    modules = _map(SRC_LAYOUT)
    assert modules.name_of("src/pkg/core.py") == "pkg.core"
    assert modules.name_of("src/pkg/__init__.py") == "pkg"
    assert modules.name_of("src/pkg/sub/deep.py") == "pkg.sub.deep"
    assert modules.module("nspkg.mod").path == "src/nspkg/mod.py"
    assert modules.is_namespace_package("nspkg")
    assert not modules.is_namespace_package("pkg")
    # The root is a source root too, so the same file has a second, less preferred name.
    assert modules.names_of("src/pkg/core.py") == ["pkg.core", "src.pkg.core"]


def test_a_name_that_is_no_identifier_is_no_module():
    modules = _map({"my-scripts/run.py": "", "pkg/__init__.py": "", "pkg/1bad.py": ""})
    assert modules.name_of("my-scripts/run.py") is None
    assert modules.name_of("pkg/1bad.py") is None
    assert modules.name_of("pkg/__init__.py") == "pkg"


def test_relative_imports_resolve_against_the_importing_package():
    modules = _map(SRC_LAYOUT)
    assert modules.absolute("src/pkg/core.py", 1, "util") == "pkg.util"
    assert modules.absolute("src/pkg/__init__.py", 1, "core") == "pkg.core"
    assert modules.absolute("src/pkg/sub/deep.py", 2, None) == "pkg"
    assert modules.absolute("src/pkg/sub/deep.py", 3, "pkg") is None  # beyond the top-level package
    assert modules.absolute("src/pkg/core.py", 2, "outside") is None
    assert modules.absolute("src/pkg/core.py", 0, "numpy") == "numpy"


def test_scripts_and_tests_see_their_own_folder_first():
    modules = ModuleMap.of(SRC_LAYOUT, {"src": ""})
    assert modules.script_folder("tests/test_a.py") == "tests"
    assert modules.find("tests/test_a.py", "helpers").path == "tests/helpers.py"
    assert modules.find("scripts/run.py", "helpers") is None
    assert modules.find("scripts/run.py", "pkg").path == "src/pkg/__init__.py"
    # Inside a package, the script folder is the first folder up that is no package.
    assert modules.script_folder("src/pkg/sub/deep.py") == "src"


def test_reexports_are_followed_to_the_defining_module():
    project = Project.of(
        {path: ast.parse(text) for path, text in SRC_LAYOUT.items() if path.endswith(".py")}, {"src": ""}
    )
    assert project.canonical("pkg.bridge") == ("pkg.core.bridge", "src/pkg/core.py")
    assert project.canonical("pkg.helpers.place") == ("pkg.util.place", "src/pkg/util.py")
    assert project.canonical("pkg.util.np.asarray") == ("numpy.asarray", None)
    assert project.canonical("numpy.asarray") == ("numpy.asarray", None)


def test_a_name_bound_two_ways_is_not_followed():
    tree = {
        "pkg/__init__.py": textwrap.dedent(
            """
            try:
                from jax.dlpack import to_dlpack
            except ImportError:
                from torch.utils.dlpack import to_dlpack
            from .a import f
            f = f
            from .a import g
            """
        ),
        "pkg/a.py": "def f(): pass\ndef g(): pass\n",
    }
    project = _project(tree)
    bindings = project.bindings["pkg/__init__.py"]
    assert "to_dlpack" not in bindings
    assert "f" not in bindings
    assert bindings["g"] == "pkg.a.g"
    assert project.canonical("pkg.to_dlpack") == ("pkg.to_dlpack", "pkg/__init__.py")


def test_a_reexport_cycle_ends():
    tree = {"a/__init__.py": "from .b import x\n", "a/b.py": "from a import x\n"}
    name, path = _project(tree).canonical("a.x")
    assert path is None and name in ("a.x", "a.b.x")


def test_dependents_follow_imports_transitively():
    project = Project.of(
        {path: ast.parse(text) for path, text in SRC_LAYOUT.items() if path.endswith(".py")}, {"src": ""}
    )
    assert project.imports["src/pkg/core.py"] == {"src/pkg/util.py", "src/pkg/__init__.py"}
    changed = project.dependents(["src/pkg/util.py"])
    assert {"src/pkg/core.py", "src/pkg/__init__.py", "src/pkg/sub/deep.py", "tests/test_a.py",
            "scripts/run.py"} <= changed
    assert "src/nspkg/mod.py" not in changed
    assert "tests/helpers.py" not in changed


@pytest.mark.parametrize(
    ("importer", "name"),
    [
        ("tests/test_a.py", "helpers"),
        ("tests/test_a.py", "pkg.core"),
        ("tests/test_a.py", "pkg.sub.deep"),
        ("tests/test_a.py", "nspkg.mod"),
        ("scripts/run.py", "pkg"),
    ],
)
def test_the_map_agrees_with_cpython(tmp_path: Path, importer: str, name: str):
    for path, text in SRC_LAYOUT.items():
        target = tmp_path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        # Only the import machinery is asked: the files' own imports are not run.
        target.write_text("" if path.endswith(".py") else text)
    modules = ModuleMap.of(SRC_LAYOUT, {"src": ""})
    expected = modules.find(importer, name)
    folder = tmp_path / modules.script_folder(importer)
    code = (
        "import importlib, sys\n"
        f"sys.path[:0] = [{str(folder)!r}, {str(tmp_path / 'src')!r}]\n"
        f"print(importlib.import_module({name!r}).__file__)\n"
    )
    loaded = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True)
    assert Path(loaded.stdout.strip()).resolve() == (tmp_path / expected.path).resolve()
