"""The root of a file with no project marker above it (issue 55).

Such a file's root is the folder named on the command line that holds it, or its own folder (the
first above its packages), whichever is higher: never the working directory's tree unless that
was named. Checking a two-file project from a folder with thousands of files below it must do the
same work as from an empty folder: the same directories listed, the same files read. Counted, not
timed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from jax_codemod.cli.main import main
from jax_codemod.engine import project

DATA = '''import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

MESH = Mesh(np.array(jax.devices()[:4]), ("batch",))
SHARDING = NamedSharding(MESH, PartitionSpec("batch"))


def make_batch(n):
    return jax.device_put(np.zeros((n, 4)), SHARDING)
'''
EXPORT = '''import torch

from data import make_batch


def to_torch(n):
    return torch.from_dlpack(make_batch(n))
'''
# The crowd: files nobody names, in folders that are no packages and hold no marker.
CROWD_FOLDERS = 30
CROWD_FILES = 20


def write_project(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "data.py").write_text(DATA)
    (folder / "export.py").write_text(EXPORT)
    return folder


def crowd(folder: Path) -> None:
    for number in range(CROWD_FOLDERS):
        sub = folder / f"lib{number}"
        sub.mkdir(parents=True)
        for index in range(CROWD_FILES):
            # Files that would be read if listed: each imports torch and a module named `data`.
            (sub / f"m{index}.py").write_text("import torch\nfrom data import make_batch\n")


class Counted:
    """What a run lists and reads: folders scanned, files opened for reading."""

    def __init__(self, monkeypatch) -> None:
        self.scanned: list[str] = []
        self.read: list[str] = []
        scandir, read_bytes = os.scandir, project.read_bytes

        def counting_scandir(path=".", *args):
            self.scanned.append(os.path.abspath(path))
            return scandir(path, *args)

        def counting_read(path):
            self.read.append(os.path.abspath(path))
            return read_bytes(path)

        monkeypatch.setattr(os, "scandir", counting_scandir)
        monkeypatch.setattr(project, "read_bytes", counting_read)

    def relative(self, base: Path) -> tuple[list[str], list[str]]:
        def under(paths):
            return sorted(os.path.relpath(path, base).replace(os.sep, "/") for path in paths)
        return under(self.scanned), under(self.read)


def run(*argv: str) -> dict:
    with CliRunner().isolation() as (out, err, _):
        code = main(["run", "--dry-run", "--format", "json", "--no-progress", "--no-cache", "-j", "1",
                     "--select", "JAX002", *argv])
        text = out.getvalue().decode()
    assert code in (0, 1), err.getvalue().decode()
    return json.loads(text)


def located(document: dict) -> list[tuple[str, int, str]]:
    return sorted((f["path"].replace(os.sep, "/"), f["line"], f["code"]) for f in document["findings"])


@pytest.mark.parametrize("named", [("proj/export.py",), ("proj/export.py", "proj/data.py"), ("proj",)])
def test_a_crowded_working_directory_costs_what_an_empty_one_does(tmp_path, monkeypatch, named):
    empty, crowded = tmp_path / "empty", tmp_path / "crowded"
    write_project(empty / "proj")
    write_project(crowded / "proj")
    crowd(crowded)
    work = {}
    for base in (empty, crowded):
        monkeypatch.chdir(base)
        project.forget_roots()
        with monkeypatch.context() as patched:
            counted = Counted(patched)
            document = run(*named)
        work[base.name] = (located(document), *counted.relative(base))
    found, scanned, read = work["crowded"]
    # The export's reason is still read from data.py (its own folder is its root) ...
    assert found == [("proj/export.py", 7, "JAX002")]
    # ... and nothing outside the project is listed or read.
    assert all(path.startswith("proj") for path in scanned + read), (scanned, read)
    assert work["crowded"] == work["empty"]


def test_a_named_folder_is_the_root_of_its_unmarked_files(tmp_path, monkeypatch):
    """`codemod run .` names the working directory: a script in a folder below it reads the
    working directory's modules, as `python -m` or a PYTHONPATH of `.` would let it."""
    (tmp_path / "data.py").write_text(DATA)
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "export.py").write_text(EXPORT)
    monkeypatch.chdir(tmp_path)
    project.forget_roots()
    assert located(run(".")) == [("scripts/export.py", 7, "JAX002")]
    assert project.root_of("scripts/export.py") == str(tmp_path)
    # Named alone, the script's root is its own folder: `data` is no module of it.
    project.forget_roots()
    assert located(run("scripts/export.py")) == []
    assert project.root_of("scripts/export.py") == str(tmp_path / "scripts")


def test_a_named_folder_inside_a_package_keeps_the_package_importable(tmp_path, monkeypatch):
    """A folder named inside a package does not cut its modules off from their package's
    absolute imports: the root is the first folder above the packages, which holds it."""
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "data.py").write_text(DATA)
    (package / "sub" / "export.py").write_text(EXPORT.replace("from data import", "from pkg.data import"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    project.forget_roots()
    assert located(run(str(package / "sub"))) == [(str(package / "sub" / "export.py").replace(os.sep, "/"), 7, "JAX002")]
    assert project.root_of(str(package / "sub" / "export.py")) == project.scoped(str(tmp_path), "pkg")
    # Listed within the package: the folder beside it (where the run started) is not read.
    assert project.list_files(project.root_of(str(package / "sub" / "export.py"))) == [
        "pkg/__init__.py", "pkg/data.py", "pkg/sub/__init__.py", "pkg/sub/export.py"]


def test_a_package_named_in_a_crowded_folder_lists_the_package_only(tmp_path, monkeypatch):
    """`codemod run proj` (or `proj/export.py`) where proj is a package: its absolute imports
    (`from proj.data import ...`) resolve from the folder above it, which is not listed."""
    work = {}
    for base in (tmp_path / "empty", tmp_path / "crowded"):
        folder = write_project(base / "proj")
        (folder / "__init__.py").write_text("")
        (folder / "export.py").write_text(EXPORT.replace("from data import", "from proj.data import"))
        if base.name == "crowded":
            crowd(base)
        monkeypatch.chdir(base)
        for named in ("proj", "proj/export.py"):
            project.forget_roots()
            with monkeypatch.context() as patched:
                counted = Counted(patched)
                document = run(named)
            work[base.name, named] = (located(document), *counted.relative(base))
            assert located(document) == [("proj/export.py", 7, "JAX002")]
    for named in ("proj", "proj/export.py"):
        assert work["crowded", named] == work["empty", named]


def test_a_marker_decides_the_root_whatever_is_named(tmp_path, monkeypatch):
    marked = write_project(tmp_path / "marked")
    (marked / "pyproject.toml").write_text("[project]\nname = 'm'\n")
    (marked / "tools").mkdir()
    (marked / "tools" / "export.py").write_text(EXPORT)
    monkeypatch.chdir(tmp_path)
    for named in ([str(marked / "tools")], [str(tmp_path)], []):
        project.name_paths(named)
        project.forget_roots()
        assert project.root_of(str(marked / "tools" / "export.py")) == str(marked)
