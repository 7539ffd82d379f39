"""The jax releases the analysed project says it supports: its own declared jax requirement.

ruff takes its target from the project's ``requires-python``; codemod takes its target JAX range
from the project's jax requirement, found in the first of these that declares one, looking in
the analysed root's folder first and then in each folder above it (up to the repository's top,
the folder holding ``.git``), so the root's own file wins:

- ``pyproject.toml``: ``[project] dependencies`` (else its ``optional-dependencies``),
  ``[tool.poetry]`` dependencies and groups, ``[dependency-groups]`` and ``[tool.uv]``
  ``dev-dependencies``;
- ``setup.cfg``: ``[options] install_requires`` (else ``[options.extras_require]``);
- ``setup.py``: a literal ``install_requires=[...]`` (else a literal ``extras_require={...}``);
- ``requirements*.txt``.

A requirement every install has (``dependencies``, ``install_requires``) decides the range; only
where none names jax do the optional ones, and then the code must run under each of them, so the
range spans them all. Nothing here imports packaging: the specifier is read by
``jax_versions.parse_range``.
"""

from __future__ import annotations

import os
import re

from jax_codemod.analysis import jax_versions

# PEP 508, as far as a jax requirement needs: name, extras, a version (maybe in parentheses),
# a marker. A URL requirement (`jax @ https://...`) says nothing about the version.
_REQUIREMENT = re.compile(
    r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(\(?)([^;@]*?)\)?\s*(;.*)?$"
)


class Declared:
    """A declared jax range and where it was read (``path: table``)."""

    def __init__(self, target: jax_versions.Range, source: str) -> None:
        self.target = target
        self.source = source

    def __eq__(self, other) -> bool:
        return isinstance(other, Declared) and (self.target, self.source) == (other.target, other.source)

    def __hash__(self) -> int:
        return hash((self.target, self.source))

    def __repr__(self) -> str:
        return f"Declared({str(self.target)!r}, {self.source!r})"


def declared_jax(start: str, cache: dict | None = None) -> Declared | None:
    """The jax range the project around ``start`` (a file or folder) declares, or None.
    ``cache`` (folder -> answer) spares a run with many roots (pre-commit passes every file)
    reading the same files again; it belongs to one run, so an edited file is read afresh."""
    folder = os.path.abspath(start if os.path.isdir(start) else os.path.dirname(start) or ".")
    cache = {} if cache is None else cache
    seen = []
    found = None
    while True:
        if folder in cache:
            found = cache[folder]
            break
        seen.append(folder)
        found = _declared_in(folder)
        parent = os.path.dirname(folder)
        if found is not None or parent == folder or os.path.exists(os.path.join(folder, ".git")):
            break
        folder = parent
    for each in seen:
        cache[each] = found
    return found


def _declared_in(folder: str) -> Declared | None:
    for name, reader in (("pyproject.toml", _pyproject), ("setup.cfg", _setup_cfg), ("setup.py", _setup_py)):
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            found = reader(path)
            if found is not None:
                return found
    try:
        names = sorted(n for n in os.listdir(folder) if n.startswith("requirements") and n.endswith(".txt"))
    except OSError:
        return None
    ranges, sources = [], []
    for name in names:
        path = os.path.join(folder, name)
        found = _range([line for line in _read_lines(path) if not line.startswith("-")])
        if found is not None:
            ranges.append(found)
            sources.append(name)
    if not ranges:
        return None
    return Declared(_hull(ranges), os.path.join(folder, sources[0]) if len(sources) == 1
                    else f"{folder}{os.sep}{{{', '.join(sources)}}}")


# Readers: each gives None when the file names no jax requirement (or cannot be read) --------


def _pyproject(path: str) -> Declared | None:
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError:
        return None
    if b"jax" not in raw.lower():
        return None
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None  # a broken pyproject is reported where it is a config; here it declares nothing
    project = _table(data.get("project"))
    tool = _table(data.get("tool"))
    poetry = _table(tool.get("poetry"))
    uv = _table(tool.get("uv"))
    required = [
        ("[project] dependencies", _range(_strings(project.get("dependencies")))),
        ("[tool.poetry.dependencies]", _poetry_range(poetry.get("dependencies"))),
    ]
    optional = [
        *((f"[project.optional-dependencies] {name}", _range(_strings(group)))
          for name, group in _table(project.get("optional-dependencies")).items()),
        *((f"[tool.poetry.group.{name}.dependencies]", _poetry_range(_table(group).get("dependencies")))
          for name, group in _table(poetry.get("group")).items()),
        *((f"[dependency-groups] {name}", _range(_strings(group)))
          for name, group in _table(data.get("dependency-groups")).items()),
        ("[tool.uv] dev-dependencies", _range(_strings(uv.get("dev-dependencies")))),
    ]
    return _choose(path, required, optional)


def _setup_cfg(path: str) -> Declared | None:
    import configparser

    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError):
        return None
    required = [("[options] install_requires", _range(_cfg_list(parser.get("options", "install_requires",
                                                                            fallback=""))))]
    optional = []
    if parser.has_section("options.extras_require"):
        optional = [(f"[options.extras_require] {name}", _range(_cfg_list(value)))
                    for name, value in parser.items("options.extras_require")]
    return _choose(path, required, optional)


def _setup_py(path: str) -> Declared | None:
    import ast  # here: a run over clean files may never need it otherwise

    try:
        with open(path, "rb") as handle:
            tree = ast.parse(handle.read())
    except (OSError, SyntaxError, ValueError):
        return None
    literals = {}  # module-level NAME = [...] a setup() keyword may name
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            literals[node.targets[0].id] = node.value
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)) != "setup":
            continue
        keywords = {k.arg: literals.get(k.value.id, k.value) if isinstance(k.value, ast.Name) else k.value
                    for k in node.keywords if k.arg}
        required = [("setup(install_requires=...)", _range(_literal_strings(keywords.get("install_requires"))))]
        optional = []
        extras = keywords.get("extras_require")
        if isinstance(extras, ast.Dict):
            optional = [(f"setup(extras_require={{{key.value!r}: ...}})", _range(_literal_strings(value)))
                        for key, value in zip(extras.keys, extras.values)
                        if isinstance(key, ast.Constant) and isinstance(key.value, str)]
        return _choose(path, required, optional)
    return None


# Helpers ------------------------------------------------------------------------------------


def _choose(path, required, optional) -> Declared | None:
    """The range every install needs, else the span of the optional ones (the code runs under each)."""
    for where, found in required:
        if found is not None:
            return Declared(found, f"{path} {where}")
    found = [(where, r) for where, r in optional if r is not None]
    if not found:
        return None
    where = found[0][0] if len(found) == 1 else ", ".join(w for w, _ in found)
    return Declared(_hull([r for _, r in found]), f"{path} {where}")


def _range(requirements) -> jax_versions.Range | None:
    """The range the jax entries among PEP 508 ``requirements`` allow, or None if none is usable.

    Entries without a marker all hold at once; entries with one (``; python_version >= '3.12'``)
    are alternatives, so the range spans them."""
    plain, marked = [], []
    for text in requirements:
        match = _REQUIREMENT.match(text)
        if not match or re.sub(r"[-_.]+", "-", match.group(1)).lower() != "jax" or "@" in text.split(";")[0]:
            continue
        (marked if match.group(4) else plain).append(match.group(3).strip())
    specifiers = [",".join(plain)] if plain else []
    specifiers += [",".join([*plain, one]) for one in marked]
    ranges = []
    for specifier in specifiers:
        try:
            ranges.append(jax_versions.parse_range(specifier or ">=0"))
        except ValueError:
            continue  # e.g. jax<0.4: no release this tool speaks for
    return _hull(ranges) if ranges else None


def _poetry_range(dependencies) -> jax_versions.Range | None:
    """``jax = "^0.4.30"``, ``jax = {version = ">=0.4"}`` or a list of such tables (alternatives)."""
    spec = next((v for k, v in _table(dependencies).items() if re.sub(r"[-_.]+", "-", k).lower() == "jax"), None)
    if spec is None:
        return None
    alternatives = spec if isinstance(spec, list) else [spec]
    ranges = []
    for one in alternatives:
        version = one.get("version") if isinstance(one, dict) else one
        if not isinstance(version, str):
            continue  # a git or path dependency: no version to read
        try:
            ranges.append(jax_versions.parse_range(">=0" if version.strip() in ("", "*") else version))
        except ValueError:
            continue
    return _hull(ranges) if ranges else None


def _hull(ranges: list[jax_versions.Range]) -> jax_versions.Range:
    low = min(r.low for r in ranges)
    if any(r.high is None for r in ranges):
        return jax_versions.Range(low)
    top = max(ranges, key=lambda r: (r.high, r.high_inclusive))
    return jax_versions.Range(low, top.high, top.high_inclusive)


def _table(value) -> dict:
    return value if isinstance(value, dict) else {}


def _strings(value) -> list[str]:
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def _literal_strings(node) -> list[str]:
    import ast

    if isinstance(node, (ast.List, ast.Tuple)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def _cfg_list(value: str) -> list[str]:
    return [line for part in value.splitlines() for line in [part.split(" #")[0].strip()] if line]


def _read_lines(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError:
        return []
    lines = []
    for line in text.splitlines():
        line = re.sub(r"(^|\s)#.*", "", line)
        line = re.sub(r"\s--?[a-z].*", "", line).strip()  # per-requirement options: --hash=..., -e
        if line:
            lines.append(line)
    return lines
