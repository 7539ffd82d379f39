"""Where a project's modules live, as Python's import system finds them.

The first layer of the project-wide analysis (issue 34): before one module's values can be read
through another's, an import has to be turned into the file it loads. This module answers that
from a list of the root's files alone, with no file system access and no import of user code:

- a file's dotted module name, under each *source root* that can hold it (the root itself,
  ``src/``, a ``[tool.setuptools] package-dir`` folder), packages with or without
  ``__init__.py`` (PEP 420 namespace packages);
- an import statement's absolute module, relative imports (``from ..x import y``) included,
  resolved as Python resolves them against the importing module's package;
- for a script or a test outside any package, the folder Python (``sys.path[0]``) or pytest
  (``rootdir``-less *prepend* import mode: the first folder up without ``__init__.py``) puts
  first on the path, so ``import helpers`` beside ``tests/test_x.py`` finds ``tests/helpers.py``;
- the names a module binds by importing (``from .core import f`` in a package's
  ``__init__.py``), so ``pkg.f`` can be followed to the module that defines it;
- which project modules each module imports, and so whose results a change invalidates.

What Python decides only at run time (``sys.path`` edits, import hooks, ``__path__`` changes) is
not modelled; a name that resolves to no file of the root is outside it, and callers treat it as
they treat a third-party name.
"""

from __future__ import annotations

import ast
import bisect
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import PurePosixPath

# Folders that hold importable code under a project root without being a package themselves, in
# the order they are asked: a `src/` layout's packages are what the project installs, so
# `src/pkg/core.py` is `pkg.core` before it is the namespace-package spelling `src.pkg.core`.
DEFAULT_SOURCE_ROOTS: Mapping[str, str] = {"src": "", "": ""}
# How many re-export hops `canonical` follows: real packages use two or three.
MAX_HOPS = 16


_UNSEEN = object()


def _normal(path: str) -> bool:
    """Whether ``str(PurePosixPath(path))`` is ``path`` itself: a relative path without empty
    or ``.`` parts (what a root's listing gives)."""
    return bool(path) and not (
        path[0] == "/" or path.endswith(("/", "/.")) or path.startswith("./") or "//" in path or "/./" in path or path == "."
    )


@dataclass(frozen=True)
class Module:
    name: str  # dotted: "pkg.sub.mod"; a package's own module is "pkg.sub"
    path: str  # relative posix path of the file: "src/pkg/sub/mod.py", "src/pkg/sub/__init__.py"

    @property
    def is_package(self) -> bool:
        return PurePosixPath(self.path).name in ("__init__.py", "__init__.pyi")


@dataclass
class ModuleMap:
    """The modules of one root, from its file list (relative posix paths)."""

    paths: frozenset[str]
    # folder (relative, "" for the root) -> the package prefix its contents import under
    source_roots: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_SOURCE_ROOTS))

    @classmethod
    def of(cls, paths: Iterable[str], source_roots: Mapping[str, str] | None = None) -> ModuleMap:
        clean = frozenset(
            path if _normal(path) else str(PurePosixPath(path)) for path in paths if path.endswith((".py", ".pyi"))
        )
        roots = dict(DEFAULT_SOURCE_ROOTS if source_roots is None else source_roots)
        return cls(clean, roots)

    @cached_property
    def _folders(self) -> frozenset[str]:
        found = set()
        for path in self.paths:
            for parent in PurePosixPath(path).parents:
                found.add(str(parent) if str(parent) != "." else "")
        return frozenset(found)

    @cached_property
    def _packages(self) -> frozenset[str]:
        """Folders with an ``__init__.py``: regular packages."""
        # (On the normalized paths ``of`` makes: PurePosixPath's parent and name, by string work.)
        found = set()
        for path in self.paths:
            if _normal(path):
                folder, _, name = path.rpartition("/")
            else:
                pure = PurePosixPath(path)
                folder, name = (str(pure.parent) if str(pure.parent) != "." else ""), pure.name
            if name in ("__init__.py", "__init__.pyi"):
                found.add(folder)
        return frozenset(found)

    @cached_property
    def _by_name(self) -> dict[str, Module]:
        """Every module name under every source root; the first root (in order) wins a clash, as
        the earlier ``sys.path`` entry does. Within a root a package (``interop/__init__.py``)
        wins over a module of its name (``interop.py``), as Python's finder looks for the package
        first (issue 53: a decoy module beside the package was followed instead)."""
        found: dict[str, Module] = {}
        for root, prefix in self.source_roots.items():
            here: dict[str, Module] = {}
            for path in sorted(self.paths):
                name = self._name_under(path, root, prefix)
                if name is not None and name not in found and (name not in here or PurePosixPath(path).name == "__init__.py"
                                                               and not here[name].is_package):
                    here[name] = Module(name, path)
            found.update(here)
        return found

    @staticmethod
    def _name_under(path: str, root: str, prefix: str) -> str | None:
        # On the normalized posix file paths of ``paths``, as PurePosixPath's relative_to and
        # with_suffix("") read them (string work: it runs for every file of the root).
        if root:
            if not path.startswith(root + "/"):
                return None
            path = path[len(root) + 1 :]
        parts = path.split("/")
        stem, dot, _ = parts[-1].rpartition(".")
        if dot and stem.strip("."):
            parts[-1] = stem
        if parts and parts[-1] == "__init__":
            parts.pop()
        if not all(part.isidentifier() for part in parts):
            return None
        dotted = ".".join(part for part in (prefix, *parts) if part)
        return dotted or None

    # Questions ----------------------------------------------------------------------

    def module(self, name: str) -> Module | None:
        """The file that ``import name`` loads from this root, or None (outside it, or a
        namespace package, which has no file)."""
        return self._by_name.get(name)

    def is_namespace_package(self, name: str) -> bool:
        """``name`` is a folder of the root without ``__init__.py`` that holds Python files."""
        for root, prefix in self.source_roots.items():
            if prefix and not (name == prefix or name.startswith(prefix + ".")):
                continue
            rest = name[len(prefix) :].lstrip(".") if prefix else name
            folder = "/".join(part for part in (root, *rest.split(".")) if part)
            if folder in self._folders and folder not in self._packages:
                return True
        return False

    def names_of(self, path: str) -> list[str]:
        """Every dotted name under which ``path`` can be imported, the preferred first."""
        return list(self._names_by_path.get(str(PurePosixPath(path)), ()))

    @cached_property
    def _names_by_path(self) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for module in self._by_name.values():
            found.setdefault(module.path, []).append(module.name)
        return found

    def name_of(self, path: str) -> str | None:
        names = self.names_of(path)
        return names[0] if names else None

    def script_folder(self, path: str) -> str:
        """The folder put first on ``sys.path`` when ``path`` runs as a script or a pytest
        test module (the first ancestor that is not a regular package)."""
        found = self._script_folders.get(path)
        if found is None:
            # String work on the normalized posix paths (every import of every file asks),
            # found once per folder: a folder's files share the answer.
            folder = path.rpartition("/")[0]
            by_folder = self._script_folders_of_folders
            found = by_folder.get(folder)
            if found is None:
                found = folder
                while found and found in self._packages:
                    found = found.rpartition("/")[0]
                by_folder[folder] = found
            self._script_folders[path] = found
        return found

    @cached_property
    def _script_folders(self) -> dict[str, str]:
        return {}  # ``script_folder``'s answers, by file

    @cached_property
    def _script_folders_of_folders(self) -> dict[str, str]:
        return {}  # ``script_folder``'s answers, by the file's folder

    def absolute(self, importer: str, level: int, module: str | None) -> str | None:
        """The absolute module an import in the file ``importer`` names: ``level`` leading dots
        and ``module`` as ``ast.ImportFrom`` holds them. None where Python would raise
        (beyond the top-level package, or a relative import outside any package)."""
        if not level:
            return module
        own = self.name_of(importer)
        if own is None:
            return None
        parts = own.split(".")
        package = parts if self._is_package_file(importer) else parts[:-1]
        if level - 1 > len(package) - 1 or not package:
            return None
        base = package[: len(package) - (level - 1)]
        return ".".join([*base, module] if module else base)

    def _is_package_file(self, path: str) -> bool:
        return PurePosixPath(path).name in ("__init__.py", "__init__.pyi")

    def find(self, importer: str, name: str) -> Module | None:
        """The module an absolute ``import name`` in ``importer`` loads: the importer's script
        folder first (as ``sys.path[0]`` is), then the source roots."""
        folder = self.script_folder(importer)
        key = (folder, name)
        found = self._found.get(key, _UNSEEN)
        if found is _UNSEEN:
            found = self._name_under_folder(folder, name) if folder not in self.source_roots else None
            found = self._found[key] = found if found is not None else self.module(name)
        return found

    @cached_property
    def _found(self) -> dict[tuple[str, str], Module | None]:
        # ``find``'s answers by script folder: the files of a folder import the same modules.
        return {}

    def first_parts_from(self, folder: str) -> frozenset[str]:
        """Every first part of a name ``find`` can answer for an importer whose script folder is
        ``folder`` (a superset: a first part here may still name no module): the first parts of
        the source roots' module names, and the entries of ``folder`` itself (its files' stems,
        its subfolders). An import whose first part is none of them loads nothing of the root."""
        found = self._first_parts_from.get(folder)
        if found is None:
            found = set(self._first_parts)
            if folder not in self.source_roots:
                found.update(self._entries_of(folder))
            found = self._first_parts_from[folder] = frozenset(found)
        return found

    @cached_property
    def _first_parts_from(self) -> dict[str, frozenset[str]]:
        return {}  # ``first_parts_from``'s answers, by script folder

    @cached_property
    def _first_parts(self) -> frozenset[str]:
        # A module's name under a source root starts with the root's prefix or with one of the
        # root folder's entries: the names themselves (``_by_name``, a sort and a check of every
        # path) are not needed for that.
        found: set[str] = set()
        for root, prefix in self.source_roots.items():
            if prefix:
                found.add(prefix.partition(".")[0])
            else:
                found.update(self._entries_of(root))
        return frozenset(found)

    def tops_of(self, path: str) -> list[str]:
        """The first part of each name ``path`` may have under a source root, in their order:
        those of ``names_of`` and more (a name another file of an earlier root took, a path with
        a part that is no identifier, which has no name at all)."""
        found = []
        for root, prefix in self.source_roots.items():
            if root:
                if not path.startswith(root + "/"):
                    continue
                rest = path[len(root) + 1 :]
            else:
                rest = path
            if prefix:
                found.append(prefix.partition(".")[0])
            else:
                head, below, _ = rest.partition("/")
                found.append(head if below else head.partition(".")[0])
        return found

    def _entries_of(self, folder: str) -> frozenset[str]:
        """The first parts the entries of ``folder`` can be imported by (`f.py`, `f.pyi`: `f`;
        a subfolder holding Python files: its name). Found for the few folders asked (the
        source roots, the script folders of the files checked), not for every folder."""
        found = self._entries.get(folder)
        if found is None:
            # The folder's paths are one run of the sorted list, and a subfolder's one run within
            # it, stepped over at once (`/` sorts just before `0`): a step per entry, not per
            # path of the root (every script folder of the gate's files asks, warp's seventy).
            prefix = f"{folder}/" if folder else ""
            size = len(prefix)
            paths = self._sorted_paths
            heads = set()
            at = bisect.bisect_left(paths, prefix)
            while at < len(paths) and paths[at].startswith(prefix):
                head, below, _ = paths[at][size:].partition("/")
                if below:
                    heads.add(head)
                    at = bisect.bisect_left(paths, f"{prefix}{head}0", at)
                else:
                    heads.add(head.partition(".")[0])
                    at += 1
            found = self._entries[folder] = frozenset(heads)
        return found

    @cached_property
    def _entries(self) -> dict[str, frozenset[str]]:
        return {}  # ``_entries_of``'s answers, by folder

    @cached_property
    def _sorted_paths(self) -> list[str]:
        return sorted(self.paths)

    def _name_under_folder(self, folder: str, name: str) -> Module | None:
        base = "/".join(part for part in (folder, *name.split(".")) if part)
        # The package first, as Python's finder (a module of its name beside it is never imported).
        for candidate in (base + "/__init__.py", base + ".py", base + "/__init__.pyi", base + ".pyi"):
            if candidate in self.paths:
                return Module(name, candidate)
        return None

    # Bindings made by imports ----------------------------------------------------------

    def import_bindings(self, path: str, tree: ast.Module) -> dict[str, str]:
        """The module-level names ``path`` binds by importing, each to the absolute dotted
        name it refers to: ``from .core import f`` in ``pkg/__init__.py`` gives
        ``{"f": "pkg.core.f"}``, ``import numpy as np`` gives ``{"np": "numpy"}``. A name bound
        more than one way at module level (two imports in sibling ``try``/``except`` branches,
        an import and an assignment) is left out: which one holds depends on the run."""
        found: dict[str, str] = {}
        other: set[str] = set()
        for statement in _module_level(tree.body):
            bound: list[tuple[str, str]] = []
            if isinstance(statement, ast.Import):
                for alias in statement.names:
                    top = alias.name.split(".")[0]
                    bound.append((alias.asname, alias.name) if alias.asname else (top, top))
            elif isinstance(statement, ast.ImportFrom):
                base = self.absolute(path, statement.level, statement.module)
                for alias in statement.names:
                    if alias.name == "*":
                        continue
                    if base is None:
                        other.add(alias.asname or alias.name)
                    else:
                        bound.append((alias.asname or alias.name, f"{base}.{alias.name}"))
            else:
                other.update(_bound_by(statement))
            for name, target in bound:
                if found.get(name, target) != target:
                    other.add(name)
                found[name] = target
        return {name: target for name, target in found.items() if name not in other}

    def imported_modules(self, path: str, tree: ast.Module) -> set[str]:
        """The modules of this root that ``path`` imports anywhere in it (function-level imports
        too: they run when the function does), by the name they have in this map."""
        found: set[str] = set()
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = self.absolute(path, node.level, node.module)
                if base is None:
                    continue
                names = [base, *(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")]
            for name in names:
                # `import a.b.c` runs a, a.b and a.b.c.
                parts = name.split(".")
                for end in range(1, len(parts) + 1):
                    module = self.find(path, ".".join(parts[:end]))
                    if module is not None and module.path != path:
                        found.add(module.path)
        return found


@dataclass
class Project:
    """A root's modules with what each binds by importing and whom each imports: the part of the
    project-wide summaries that needs only imports."""

    modules: ModuleMap
    bindings: dict[str, dict[str, str]] = field(default_factory=dict)  # path -> import bindings
    imports: dict[str, set[str]] = field(default_factory=dict)  # path -> paths it imports

    @classmethod
    def of(cls, trees: Mapping[str, ast.Module], source_roots: Mapping[str, str] | None = None) -> Project:
        modules = ModuleMap.of(trees, source_roots)
        project = cls(modules)
        for path, tree in trees.items():
            project.bindings[path] = modules.import_bindings(path, tree)
            project.imports[path] = modules.imported_modules(path, tree)
        return project

    def canonical(self, qualified: str) -> tuple[str, str | None]:
        """Follow ``qualified`` through the root's re-exports to where it is defined: the
        final dotted name and the file that defines it (None when it leaves the root).
        ``pkg.f`` with ``from .core import f`` in ``pkg/__init__.py`` is ``pkg.core.f`` in
        ``pkg/core.py``; a cycle of re-exports stops where it started."""
        seen: set[str] = set()
        current = qualified
        for _ in range(MAX_HOPS):
            if current in seen:
                break
            seen.add(current)
            module, rest = self._split(current)
            if module is None:
                return current, None
            if not rest:
                return current, module.path
            target = self.bindings.get(module.path, {}).get(rest[0])
            if target is None:
                return current, module.path
            current = ".".join([target, *rest[1:]])
        return current, None

    def _split(self, qualified: str) -> tuple[Module | None, list[str]]:
        """The longest module prefix of ``qualified`` in this root, and the attribute path after it."""
        parts = qualified.split(".")
        for end in range(len(parts), 0, -1):
            module = self.modules.module(".".join(parts[:end]))
            if module is not None:
                return module, parts[end:]
        return None, parts

    def dependents(self, changed: Iterable[str]) -> set[str]:
        """Every file whose results a change to ``changed`` can alter: those that import them,
        directly or through others (the changed files themselves included)."""
        reverse: dict[str, set[str]] = {}
        for importer, imported in self.imports.items():
            for path in imported:
                reverse.setdefault(path, set()).add(importer)
        found = set(changed)
        work = list(found)
        while work:
            for importer in reverse.get(work.pop(), ()):
                if importer not in found:
                    found.add(importer)
                    work.append(importer)
        return found


def _module_level(body: list[ast.stmt]) -> Iterable[ast.stmt]:
    """Statements that run when the module does, in order: into ``if``/``try``/``with`` blocks
    (a guarded import still binds), not into functions or classes."""
    for statement in body:
        yield statement
        if isinstance(statement, ast.If):
            yield from _module_level(statement.body)
            yield from _module_level(statement.orelse)
        elif isinstance(statement, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            yield from _module_level(statement.body)
            for handler in statement.handlers:
                yield from _module_level(handler.body)
            yield from _module_level(statement.orelse)
            yield from _module_level(statement.finalbody)
        elif isinstance(statement, (ast.With, ast.AsyncWith)):
            yield from _module_level(statement.body)


def _bound_by(statement: ast.stmt) -> set[str]:
    """Module-level names a non-import statement binds directly."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {statement.name}
    targets: list[ast.AST] = []
    if isinstance(statement, ast.Assign):
        targets = list(statement.targets)
    elif isinstance(statement, (ast.AugAssign, ast.For, ast.AsyncFor)) or (
        isinstance(statement, ast.AnnAssign) and statement.value is not None  # `x: int` binds nothing
    ):
        targets = [statement.target]
    found = set()
    for target in targets:
        for node in ast.walk(target):
            if isinstance(node, ast.Name):
                found.add(node.id)
    return found
