"""The jax releases and the platforms the analysed project says it supports: its declared requirements.

ruff takes its target from the project's ``requires-python``; codemod takes its target JAX range
(and its target platforms) from the project's requirements, found in the first folder that
declares a jax requirement, looking in the analysed root's folder first and then in each folder
above it (up to the repository's top, the folder holding ``.git``), so the root's own files win.
In that folder the range comes from the first of these that names jax:

- ``pyproject.toml``: ``[project] dependencies`` (else its ``optional-dependencies``),
  ``[tool.poetry]`` dependencies and groups, ``[dependency-groups]`` and ``[tool.uv]``
  ``dev-dependencies``;
- ``setup.cfg``: ``[options] install_requires`` (else ``[options.extras_require]``);
- ``setup.py``: a literal ``install_requires=[...]`` (else a literal ``extras_require={...}``);
- ``requirements*.txt`` (pip's format: continuation lines, ``--hash`` options, comments,
  ``-r``/``-c`` includes inside the project).

A requirement every install has (``dependencies``, ``install_requires``) decides the range; only
where none names jax do the optional ones, and then the code must run under each of them, so the
range spans them all. The platforms are those any of the folder's files declares (an extra such
as ``jax[tpu]`` says the code runs there too): see ``platforms_of``.

Requirements are read with ``packaging`` (PEP 508 and 440's reference implementation) and every
step is linear in the file: files are read only when regular, inside the project and at most
``MAX_SETTINGS_FILE_BYTES`` (``setup.py``: ``MAX_SETUP_PY_BYTES``, it is parsed); a requirement
longer than ``MAX_REQUIREMENT_CHARS`` is not parsed; no regex sees unbounded text. A file that
cannot be read or parsed declares nothing and gives a warning: never the run's end.
"""

from __future__ import annotations

import os
import re
import stat

from jax_codemod.analysis import jax_versions

# A requirement file, setup.cfg or pyproject.toml is a few KiB; one past this is not read (a warning).
MAX_SETTINGS_FILE_BYTES = 1 * 2**20
# setup.py is parsed, which costs far more per byte (10 MB took 75 s and 5 GB): real ones are under 100 KiB.
MAX_SETUP_PY_BYTES = 256 * 2**10
# One requirement (its options and comment cut): PEP 508 text longer than this is no real requirement.
MAX_REQUIREMENT_CHARS = 4096
# -r/-c includes followed from one requirements*.txt: how deep, and how many files in all.
MAX_INCLUDE_DEPTH = 5
MAX_INCLUDED_FILES = 32
# jax requirements of one file taken into the range (each marked one is combined with the plain
# ones: the work is their product).
MAX_JAX_ENTRIES = 64

_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
# Bytes a file must hold to declare anything here: a file with none is not parsed.
_NEEDLES = (b"jax", b"libtpu")


class Declared:
    """What the project declares: a jax range (``target``, None when none of its files names a
    version of jax) and where it was read (``source``: ``path table``); the platforms its
    requirements name (``platforms``: e.g. ``{"tpu"}``, without the ``cpu`` every install has)
    and the requirements that named them (``platform_sources``); ``warnings``: (path, reason)
    for each settings file that could not be read."""

    def __init__(self, target: jax_versions.Range | None, source: str | None, platforms=frozenset(),
                 platform_sources: tuple[str, ...] = (), warnings: tuple[tuple[str, str], ...] = ()) -> None:
        self.target = target
        self.source = source
        self.platforms = frozenset(platforms)
        self.platform_sources = tuple(platform_sources)
        self.warnings = tuple(warnings)

    def _key(self):
        return (None if self.target is None else str(self.target), self.source, self.platforms,
                self.platform_sources, self.warnings)

    def __eq__(self, other) -> bool:
        return isinstance(other, Declared) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (f"Declared({None if self.target is None else str(self.target)!r}, {self.source!r}, "
                f"platforms={sorted(self.platforms)!r})")

    def without(self, *, target: bool = False, platforms: bool = False) -> Declared | None:
        """This declaration less what a more explicit setting decides (None if nothing is left)."""
        kept = Declared(None if target else self.target, None if target else self.source,
                        () if platforms else self.platforms, () if platforms else self.platform_sources,
                        self.warnings)
        if kept.target is None and not kept.platforms and not kept.warnings:
            return None
        return kept


def declared_jax(start: str, cache: dict | None = None) -> Declared | None:
    """What the project around ``start`` (a file or folder) declares, or None.
    ``cache`` (folder -> answer) spares a run with many roots (pre-commit passes every file)
    reading the same files again; it belongs to one run, so an edited file is read afresh."""
    folder = os.path.abspath(start if os.path.isdir(start) else os.path.dirname(start) or ".")
    cache = {} if cache is None else cache
    seen = []
    warnings: list[tuple[str, str]] = []
    found = None
    while True:
        if folder in cache:
            found = cache[folder]
            break
        seen.append(folder)
        found = _declared_in(folder, warnings)
        parent = os.path.dirname(folder)
        if found is not None or parent == folder or os.path.exists(os.path.join(folder, ".git")):
            break
        folder = parent
    if warnings:  # a file below the declaring folder (or none) could not be read: say so with the answer
        if found is None:
            found = Declared(None, None, warnings=tuple(warnings))
        else:
            found = Declared(found.target, found.source, found.platforms, found.platform_sources,
                             (*warnings, *(w for w in found.warnings if w not in warnings)))
    for each in seen:
        cache[each] = found
    return found


def declared_by_config(path: str) -> Declared | None:
    """What a trusted ``--config`` file declares itself: its own ``[project]`` (or Poetry)
    requirements when it is a pyproject.toml, read as the tree's are. The action and the example
    workflows name the base branch's pyproject.toml: the project as merged says which JAX and
    platforms it supports, and nothing in the pull request's tree is read for it."""
    if not os.path.isfile(path):
        return None  # --config /dev/null: the defaults
    warnings: list[tuple[str, str]] = []
    # The config is trusted, a link to it too: its own folder is where its reading may lead.
    reading = _Reading(os.path.dirname(os.path.realpath(path)), warnings)
    try:
        found = _pyproject(path, reading)
    except (RecursionError, MemoryError):
        found = None  # load_config has read it already: past the TOML parser's depth it is a config error
    if found is None:
        return Declared(None, None, warnings=tuple(warnings)) if warnings else None
    platforms = platforms_of(found.entries)
    if found.range is None and not platforms:
        return None
    return Declared(found.range, None if found.range is None else f"{path} {found.where}",
                    frozenset(p for p, _ in platforms), tuple(dict.fromkeys(w for _, w in platforms)),
                    tuple(warnings))


class _Entry:
    """One requirement as packaging reads it, with the text and place it was read from."""

    __slots__ = ("extras", "marker", "name", "specifier", "text", "url", "where")

    def __init__(self, name, extras, specifier, marker, url, text, where) -> None:
        self.name, self.extras, self.specifier, self.marker, self.url = name, extras, specifier, marker, url
        self.text, self.where = text, where


class _File:
    """What one settings file declares: its jax range and where, and its requirement entries."""

    def __init__(self, path: str, range_and_where=None, entries=()) -> None:
        self.path = path
        self.range, self.where = range_and_where if range_and_where is not None else (None, None)
        self.entries = list(entries)


def _declared_in(folder: str, warnings: list) -> Declared | None:
    """What ``folder``'s own files declare: the range of the first that names a jax version
    (pyproject.toml, setup.cfg, setup.py, then requirements*.txt together), and the platforms of
    them all (a TPU extra in requirements.txt counts beside a plain jax in pyproject.toml)."""
    reading = _Reading(folder, warnings)
    files = [found for name, reader in (("pyproject.toml", _pyproject), ("setup.cfg", _setup_cfg),
                                        ("setup.py", _setup_py))
             for found in [_guarded(os.path.join(folder, name), reader, reading)] if found is not None]
    requirements_txt = _requirement_files(folder, reading)
    if requirements_txt is not None:
        files.append(requirements_txt)
    platforms = platforms_of([e for f in files for e in f.entries])
    with_range = next((f for f in files if f.range is not None), None)
    if with_range is None and not platforms:
        return None
    source = None
    if with_range is not None:
        source = with_range.path if with_range.where is None else f"{with_range.path} {with_range.where}"
    return Declared(with_range.range if with_range else None, source, frozenset(p for p, _ in platforms),
                    tuple(dict.fromkeys(where for _, where in platforms)))


def _guarded(path: str, reader, reading: _Reading) -> _File | None:
    """``reader(path)``, any failure of which is that file's warning: never the run's end."""
    if not os.path.lexists(path):
        return None
    try:
        return reader(path, reading)
    except (RecursionError, MemoryError):
        reading.warnings.append((path, "not read: nested too deeply or too large to read; it declares nothing here"))
    except Exception as error:  # noqa: BLE001 - a parser's surprise on hostile input is one file's problem
        reading.warnings.append((path, f"not read: {type(error).__name__}: {error}"[:300]))
    return None


def _requirement_files(folder: str, reading: _Reading) -> _File | None:
    """The folder's requirements*.txt as one declaration: the span of their ranges (each is an
    install the code must run under), their entries all."""
    try:
        names = sorted(n for n in os.listdir(folder) if n.startswith("requirements") and n.endswith(".txt"))
    except OSError:
        return None
    ranges, entries = [], []
    for name in names:
        found = _guarded(os.path.join(folder, name), _requirement_file, reading)
        if found is None:
            continue
        entries += found.entries
        if found.range is not None:
            ranges.append((name, found.range))
    if not ranges and not entries:
        return None
    path = None
    if ranges:
        path = (os.path.join(folder, ranges[0][0]) if len(ranges) == 1
                else f"{folder}{os.sep}{{{', '.join(n for n, _ in ranges)}}}")
    return _File(path or folder, (_hull([r for _, r in ranges]), None) if ranges else None, entries)


def _requirement_file(path: str, reading: _Reading) -> _File:
    entries, constraints = reading.requirement_file(path)
    return _File(path, (_range(entries, constraints), None), entries)


# Reading files from the tree ------------------------------------------------------------------


class _Reading:
    """The files one folder's declaration reads: each inside the project, regular and bounded."""

    def __init__(self, folder: str, warnings: list) -> None:
        self.folder = folder
        self.warnings = warnings
        self._tree: str | None = None
        self.included = 0

    @property
    def tree(self) -> str:
        """The project a settings file may lead into: the repository's top (the nearest folder
        at or above with ``.git``), else the folder being read."""
        if self._tree is None:
            current = self.folder
            while not os.path.exists(os.path.join(current, ".git")):
                parent = os.path.dirname(current)
                if parent == current:
                    current = self.folder
                    break
                current = parent
            self._tree = os.path.realpath(current)
        return self._tree

    def read(self, path: str, limit: int = MAX_SETTINGS_FILE_BYTES) -> bytes | None:
        """The file's bytes, or None with a warning: never through a link out of the project,
        never anything but a regular file, never more than ``limit`` bytes."""
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            return None
        except OSError as error:
            self.warnings.append((path, f"not read: {error.strerror or error}"))
            return None
        target = path
        if stat.S_ISLNK(info.st_mode):
            target = os.path.realpath(path)
            if not _inside(target, self.tree):
                self.warnings.append((path, f"not read: a symbolic link out of the project (to {target})"))
                return None
        try:
            # Without blocking (a FIFO must not hang the run), and the resolved name not followed again.
            fd = os.open(target, os.O_RDONLY | _NONBLOCK | _NOFOLLOW | _CLOEXEC)
        except OSError as error:
            self.warnings.append((path, f"not read: {error.strerror or error}"))
            return None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                self.warnings.append((path, "not read: not a regular file"))
                return None
            if info.st_size > limit:
                self.warnings.append((path, (f"not read: {info.st_size:,} bytes, over the {_size(limit)} limit "
                                             "for a settings file codemod reads; it declares nothing here")))
                return None
            with os.fdopen(os.dup(fd), "rb") as handle:
                data = handle.read(limit + 1)
        except OSError as error:
            self.warnings.append((path, f"not read: {error.strerror or error}"))
            return None
        finally:
            os.close(fd)
        if len(data) > limit:  # it grew since fstat
            self.warnings.append((path, f"not read: over the {_size(limit)} limit for a settings file"))
            return None
        return data

    def requirement_file(self, path: str) -> tuple[list[_Entry], list[_Entry]]:
        """The requirements and the constraints (``-c``) of a pip requirements file, includes followed."""
        entries: list[_Entry] = []
        constraints: list[_Entry] = []
        self._requirement_file(path, entries, constraints, depth=0, visited=set(), constraint=False)
        return entries, constraints

    def _requirement_file(self, path, entries, constraints, depth, visited, constraint) -> None:
        real = os.path.realpath(path)
        if real in visited:
            return
        visited.add(real)
        data = self.read(path)
        if data is None:
            return
        for number, logical in _logical_lines(data.decode("utf-8", "replace")):
            include, argument = _include(logical)
            if include is not None:
                if "://" in argument or not argument:
                    continue  # a URL: nothing here fetches
                if depth >= MAX_INCLUDE_DEPTH or self.included >= MAX_INCLUDED_FILES:
                    self.warnings.append((path, (f"line {number}: {include} {argument}: not read (includes are "
                                                 f"followed {MAX_INCLUDE_DEPTH} deep, {MAX_INCLUDED_FILES} files)")))
                    continue
                target = os.path.normpath(os.path.join(os.path.dirname(path), argument))
                if not _inside(os.path.realpath(target), self.tree):
                    self.warnings.append((path, f"line {number}: {include} {argument}: not read: outside the project"))
                    continue
                self.included += 1
                self._requirement_file(target, entries, constraints, depth + 1, visited,
                                       constraint or include == "-c")
                continue
            if logical.startswith("-"):
                continue  # an option (-e, -i, --hash on its own, ...): no requirement
            requirement = _requirement_part(logical)
            entry = _parse(requirement, f"{path}:{number}")
            if entry is not None:
                (constraints if constraint else entries).append(entry)


def _logical_lines(text: str):
    """(first line number, text) of each logical line of a pip requirements file: comments cut,
    continuation lines joined as pip joins them (the backslash dropped, nothing added: ``jax>=0.5,\\``
    then ``<0.8`` is ``jax>=0.5,<0.8``), blank lines dropped. Linear: no regex sees a whole line."""
    pending: list[str] = []
    start = 0
    for number, line in enumerate(text.splitlines(), 1):
        if not pending:
            start = number
        line = _without_comment(line)
        if line.endswith("\\"):
            pending.append(line[:-1])
            continue
        pending.append(line)
        joined = "".join(pending).strip()
        pending = []
        if joined:
            yield start, joined
    joined = "".join(pending).strip()
    if joined:  # a last line that ends in a backslash
        yield start, joined


def _without_comment(line: str) -> str:
    """``line`` up to a ``#`` at its start or after whitespace (pip's comment rule)."""
    at = line.find("#")
    while at != -1:
        if at == 0 or line[at - 1] in " \t":
            return line[:at].rstrip()
        at = line.find("#", at + 1)
    return line


def _include(logical: str) -> tuple[str | None, str]:
    """(``-r`` or ``-c``, its file) for an include line, else (None, "")."""
    for short, long, kind in (("-r", "--requirement", "-r"), ("-c", "--constraint", "-c")):
        if logical.startswith(long):
            rest = logical[len(long):]
            if rest[:1] == "=":
                return kind, rest[1:].strip()
            if rest[:1] in (" ", "\t"):
                return kind, rest.strip()
        elif logical.startswith(short):
            return kind, logical[len(short):].strip()
    return None, ""


def _requirement_part(logical: str) -> str:
    """The requirement before its per-requirement options (``--hash=...``), as pip splits them."""
    kept = []
    for token in logical.split(" "):
        if token.startswith("-"):
            break
        kept.append(token)
    return " ".join(kept).strip()


# Readers: each gives a _File, or None when the file names no jax requirement (or cannot be read) --


def _pyproject(path: str, reading: _Reading) -> _File | None:
    raw = reading.read(path)
    if raw is None or not _mentions(raw):
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
    groups = [
        (True, "[project] dependencies", _entries(project.get("dependencies"), path, "[project] dependencies")),
        (True, "[tool.poetry.dependencies]", _poetry_entries(poetry.get("dependencies"), path,
                                                               "[tool.poetry.dependencies]")),
        *((False, f"[project.optional-dependencies] {name}",
           _entries(group, path, f"[project.optional-dependencies] {name}"))
          for name, group in _table(project.get("optional-dependencies")).items()),
        *((False, f"[tool.poetry.group.{name}.dependencies]",
           _poetry_entries(_table(group).get("dependencies"), path, f"[tool.poetry.group.{name}.dependencies]"))
          for name, group in _table(poetry.get("group")).items()),
        *((False, f"[dependency-groups] {name}", _entries(group, path, f"[dependency-groups] {name}"))
          for name, group in _table(data.get("dependency-groups")).items()),
        (False, "[tool.uv] dev-dependencies", _entries(uv.get("dev-dependencies"), path,
                                                       "[tool.uv] dev-dependencies")),
    ]
    return _choose(path, groups)


def _setup_cfg(path: str, reading: _Reading) -> _File | None:
    raw = reading.read(path)
    if raw is None or not _mentions(raw):
        return None
    try:
        sections = _ini_sections(raw.decode("utf-8"))
    except UnicodeDecodeError:
        return None
    where = "[options] install_requires"
    groups = [(True, where, _entries(_cfg_list(sections.get("options", {}).get("install_requires", "")), path,
                                     where))]
    groups += [(False, f"[options.extras_require] {name}",
                _entries(_cfg_list(value), path, f"[options.extras_require] {name}"))
               for name, value in sections.get("options.extras_require", {}).items()]
    return _choose(path, groups)


def _ini_sections(text: str) -> dict[str, dict[str, str]]:
    """setup.cfg's sections and values as configparser reads them (keys lower-cased, indented lines
    continue a value, whole-line ``#``/``;`` comments). Not configparser itself: its option regex is
    quadratic in a long line of spaces (8,000 of them: 1 s), and this is linear."""
    sections: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    key = None
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped[0] in "#;":
            continue
        if line[:1] in (" ", "\t") and key is not None and current is not None:
            current[key] += "\n" + stripped
            continue
        key = None
        if stripped.startswith("[") and stripped.endswith("]"):
            current = sections.setdefault(stripped[1:-1].strip(), {})
            continue
        cut = min((i for i in (stripped.find("="), stripped.find(":")) if i > 0), default=-1)
        if current is not None and cut > 0:
            key = stripped[:cut].strip().lower()
            current[key] = stripped[cut + 1:].strip()
    return sections


def _setup_py(path: str, reading: _Reading) -> _File | None:
    import ast  # here: a run over clean files may never need it otherwise

    raw = reading.read(path, MAX_SETUP_PY_BYTES)
    if raw is None or not _mentions(raw):
        return None
    try:
        tree = ast.parse(raw)
    except (SyntaxError, ValueError):
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
        where = "setup(install_requires=...)"
        groups = [(True, where, _entries(_literal_strings(keywords.get("install_requires")), path, where))]
        extras = keywords.get("extras_require")
        if isinstance(extras, ast.Dict):
            for key, value in zip(extras.keys, extras.values):
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    where = f"setup(extras_require={{{key.value!r}: ...}})"
                    groups.append((False, where, _entries(_literal_strings(value), path, where)))
        return _choose(path, groups)
    return None


# Requirements ---------------------------------------------------------------------------------


def _parse(text: str, where: str) -> _Entry | None:
    """``text`` as a PEP 508 requirement, when it may name a package this module reads; else None."""
    if not text or len(text) > MAX_REQUIREMENT_CHARS or not _mentions(text.lower().encode("utf-8", "replace")):
        return None
    from packaging.requirements import InvalidRequirement, Requirement  # only for a file that names jax

    try:
        requirement = Requirement(text)
        specifier = str(requirement.specifier)
    except (InvalidRequirement, ValueError, RecursionError):
        return None
    return _Entry(_normal(requirement.name), frozenset(_normal(e) for e in requirement.extras), specifier,
                  requirement.marker is not None, requirement.url is not None, text, where)


def _entries(value, path: str, where: str) -> list[_Entry]:
    strings = value if isinstance(value, list) else []
    return [e for s in strings if isinstance(s, str) for e in [_parse(s.strip(), f"{path} {where}")] if e]


def _poetry_entries(dependencies, path: str, where: str) -> list[_Entry]:
    """``jax = "^0.4.30"``, ``jax = {version = ">=0.4", extras = ["tpu"]}`` or a list of such
    tables (alternatives), as entries: the version kept as Poetry spells it (``^``, ``~``)."""
    entries = []
    for key, spec in _table(dependencies).items():
        name = _normal(key)
        if not _mentions(name.encode("utf-8", "replace")):
            continue
        for one in spec if isinstance(spec, list) else [spec]:
            version = one.get("version") if isinstance(one, dict) else one
            extras = one.get("extras") if isinstance(one, dict) else None
            extras = frozenset(_normal(e) for e in extras if isinstance(e, str)) if isinstance(extras, list) else frozenset()
            text = f"{key} = {one!r}"[:200]
            if not isinstance(version, str):
                # a git or path dependency: no version to read, its extras still count
                entries.append(_Entry(name, extras, None, False, True, text, f"{path} {where}"))
                continue
            version = version.strip()
            if len(version) > 256:
                continue  # no real version constraint is this long (and the range reader is not fed one)
            # A list of constraints is Poetry's alternatives (each for its own Python or platform).
            alternative = isinstance(spec, list) or (isinstance(one, dict) and ("markers" in one or "python" in one))
            entries.append(_Entry(name, extras, ">=0" if version in ("", "*") else version, alternative, False, text,
                                  f"{path} {where}"))
    return entries


def _choose(path: str, groups) -> _File | None:
    """The range every install needs, else the span of the optional ones (the code runs under each)."""
    entries = [e for _required, _where, each in groups for e in each]
    if not entries:
        return None
    for required, where, each in groups:
        if required:
            found = _range(each)
            if found is not None:
                return _File(path, (found, where), entries)
    found = [(where, r) for required, where, each in groups if not required for r in [_range(each)] if r is not None]
    if not found:
        return _File(path, None, entries)
    where = found[0][0] if len(found) == 1 else ", ".join(w for w, _ in found)
    return _File(path, (_hull([r for _, r in found]), where), entries)


def _range(entries, constraints=()) -> jax_versions.Range | None:
    """The range the jax entries among ``entries`` allow, or None if none is usable.

    Entries without a marker all hold at once; entries with one (``; python_version >= '3.12'``)
    are alternatives, so the range spans them. Constraints (``-c``) narrow every alternative, and
    only where a requirement names jax."""
    jax = [e for e in entries if e.name == "jax" and not e.url and e.specifier is not None][:MAX_JAX_ENTRIES]
    if not jax:
        return None
    bounds = [e.specifier for e in constraints if e.name == "jax" and not e.url and e.specifier][:MAX_JAX_ENTRIES]
    plain = [e.specifier for e in jax if not e.marker]
    marked = [e.specifier for e in jax if e.marker]
    specifiers = [",".join([*plain, *bounds])] if plain else []
    specifiers += [",".join([*plain, one, *bounds]) for one in marked]
    ranges = []
    for specifier in specifiers:
        try:
            ranges.append(jax_versions.parse_range(specifier if specifier.strip(", ") else ">=0"))
        except ValueError:
            continue  # e.g. jax<0.4: no release this tool speaks for
    return _hull(ranges) if ranges else None


# Platforms ------------------------------------------------------------------------------------

# What the CUDA and ROCm installs are spelled: jax[cuda], jax[cuda12], jax[cuda12-pip],
# jax[cuda12-local], jax[rocm], ...; plugins jax-cuda12-plugin, jax-cuda13-pjrt, jax-rocm60-plugin.
_GPU_EXTRA = re.compile(r"(cuda|rocm)[0-9]*(-[a-z0-9]+)*\Z")
_GPU_PLUGIN = re.compile(r"jax-(cuda|rocm)[0-9]*-(plugin|pjrt)\Z")


def platforms_of(entries) -> list[tuple[str, str]]:
    """(platform, the requirement that declares it) for each entry that names one: ``jax[tpu]``,
    ``libtpu`` and ``libtpu-nightly`` the TPU; ``jax[cuda12]`` and the CUDA/ROCm plugins the GPU;
    ``jax-metal`` Apple's Metal plugin; ``jaxlib==...+cuda...`` (a CUDA build) the GPU."""
    found = []
    for entry in entries:
        names = []
        if entry.name == "jax":
            names = ["tpu" if extra == "tpu" else "gpu" for extra in sorted(entry.extras)
                     if extra == "tpu" or _GPU_EXTRA.match(extra)]
        elif entry.name in ("libtpu", "libtpu-nightly"):
            names = ["tpu"]
        elif _GPU_PLUGIN.match(entry.name):
            names = ["gpu"]
        elif entry.name == "jax-metal":
            names = ["metal"]
        elif entry.name == "jaxlib" and entry.specifier and "+cuda" in entry.specifier.lower():
            names = ["gpu"]
        for name in dict.fromkeys(names):
            found.append((name, f"{entry.where}: {entry.text}"))
    return found


# Helpers ------------------------------------------------------------------------------------


def _mentions(data: bytes) -> bool:
    lowered = data.lower()
    return any(needle in lowered for needle in _NEEDLES)


def _normal(name: str) -> str:
    """A distribution or extra name as PEP 503/685 compares them (``Jax_Metal`` -> ``jax-metal``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _hull(ranges: list[jax_versions.Range]) -> jax_versions.Range:
    low = min(r.low for r in ranges)
    if any(r.high is None for r in ranges):
        return jax_versions.Range(low)
    top = max(ranges, key=lambda r: (r.high, r.high_inclusive))
    return jax_versions.Range(low, top.high, top.high_inclusive)


def _table(value) -> dict:
    return value if isinstance(value, dict) else {}


def _literal_strings(node) -> list[str]:
    import ast

    if isinstance(node, (ast.List, ast.Tuple)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def _cfg_list(value: str) -> list[str]:
    return [line for part in value.splitlines() for line in [_without_comment(part).strip()] if line]


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _size(limit: int) -> str:
    return f"{limit // 2**20} MiB" if limit >= 2**20 else f"{limit // 2**10} KiB"
