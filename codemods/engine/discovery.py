"""Finding the Python files under the paths a user names."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pathspec

# Folders that hold no user code worth migrating; ruff skips the same kind.
SKIPPED_DIRS = frozenset(
    {
        "__pycache__",
        "__pypackages__",
        "_build",
        "buck-out",
        "build",
        "dist",
        "node_modules",
        "site-packages",
        "venv",
    }
)


@dataclass
class Discovery:
    files: list[str] = field(default_factory=list)
    # (path, reason) for named paths that do not exist or cannot be read.
    errors: list[tuple[str, str]] = field(default_factory=list)


def discover(roots: Iterable[str], exclude: Iterable[str] = ()) -> Discovery:
    """Python files under ``roots``, in a stable order, each once.

    A file named explicitly is always included. Under a directory: ``*.py`` files,
    honouring ``.gitignore`` files and ``exclude`` globs, skipping hidden, virtualenv
    and build folders, and never following a symlink out of the root or into a loop.
    """
    excludes = tuple(exclude)
    result = Discovery()
    seen: set[str] = set()
    for root in roots:
        if not os.path.lexists(root):
            result.errors.append((root, "no such file or directory"))
            continue
        if os.path.isdir(root):
            found: Iterable[tuple[str, str]] = _walk_root(root, excludes, result)
        else:
            found = [(root, os.path.realpath(root))]
        for path, real in found:
            if real not in seen:
                seen.add(real)
                result.files.append(path)
    return result


def is_excluded(path: str, excludes: tuple[str, ...]) -> bool:
    if not excludes:
        return False
    parts = Path(path).parts
    for pattern in excludes:
        if fnmatch.fnmatch(path, pattern) or any(fnmatch.fnmatch(part, pattern) for part in parts):
            return True
    return False


def _walk_root(root: str, excludes: tuple[str, ...], result: Discovery) -> Iterator[tuple[str, str]]:
    """(path, real path) of each file; real paths come from the directory's, not a realpath call per file."""
    real_root = os.path.realpath(root)
    ignores = _ancestor_ignores(real_root)
    if ignores and _ignored(real_root, True, ignores):
        # The user named an ignored folder (a virtualenv's site-packages, say): they mean it.
        ignores = []
    visited: set[str] = set()
    yield from _walk(root, real_root, real_root, ignores, excludes, visited, result)


def _walk(directory, real_dir, real_root, ignores, excludes, visited, result) -> Iterator[tuple[str, str]]:
    if real_dir in visited:
        return
    visited.add(real_dir)
    local_ignore = _load_gitignore(directory)
    if local_ignore is not None:
        ignores = [*ignores, (real_dir, local_ignore)]
    try:
        entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
    except OSError as error:
        result.errors.append((directory, f"cannot list directory: {error.strerror}"))
        return
    for entry in entries:
        path = entry.path
        if is_excluded(path, excludes):
            continue
        try:
            is_dir = entry.is_dir()
            is_file = entry.is_file()
        except OSError:
            continue
        if not (is_dir or (is_file and entry.name.endswith(".py"))):
            continue
        if entry.is_symlink():
            real = os.path.realpath(path)
            if not _inside(real, real_root):
                continue
        else:
            real = os.path.join(real_dir, entry.name)
        if is_dir:
            if _skip_dir(entry) or _ignored(real, True, ignores):
                continue
            yield from _walk(path, real, real_root, ignores, excludes, visited, result)
        elif not _ignored(real, False, ignores):
            yield path, real


def _skip_dir(entry: os.DirEntry) -> bool:
    name = entry.name
    if name.startswith(".") or name in SKIPPED_DIRS:
        return True
    return os.path.exists(os.path.join(entry.path, "pyvenv.cfg"))


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _load_gitignore(directory: str) -> pathspec.GitIgnoreSpec | None:
    path = os.path.join(directory, ".gitignore")
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            import pathspec  # ~40 ms to import; a tree without .gitignore files never needs it

            return pathspec.GitIgnoreSpec.from_lines(handle)
    except OSError:
        return None


def _ancestor_ignores(real_root: str) -> list:
    """The .gitignore files between the enclosing git repository's top and ``real_root``."""
    chain: list[str] = []
    current = real_root
    while True:
        parent = os.path.dirname(current)
        if os.path.exists(os.path.join(current, ".git")):
            break
        if parent == current:
            return []
        chain.append(parent)
        current = parent
    ignores = []
    for directory in reversed(chain):
        spec = _load_gitignore(directory)
        if spec is not None:
            ignores.append((directory, spec))
    return ignores


def _ignored(real: str, is_dir: bool, ignores) -> bool:
    """Git's rule: the deepest .gitignore with an opinion on the path (given resolved) decides."""
    for base, spec in reversed(ignores):
        relative = os.path.relpath(real, base)
        if relative.startswith(".."):
            continue
        if is_dir:
            relative += "/"
        verdict = spec.check_file(relative).include
        if verdict is not None:
            return verdict
    return False
