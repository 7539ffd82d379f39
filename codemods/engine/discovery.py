"""Finding the Python files under the paths a user names.

File selection follows ruff: exclude patterns are gitignore-style and relative to the folder of
the ``pyproject.toml`` that declares them (command-line patterns: the working directory); a
pattern without a slash also matches a name at any depth. A path named on the command line is
always checked unless ``force_exclude`` is set (what a pre-commit hook, which names every staged
file, needs). Under a directory, git's ignore files are honoured: every ``.gitignore``,
``.git/info/exclude`` and the global ``core.excludesFile``.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache
from typing import NamedTuple

from jax_codemod.engine import wildmatch

# ruff's default `exclude` (https://docs.astral.sh/ruff/settings/#exclude), plus the folders of
# Python's and codemod's own build and cache output. `exclude` in the config replaces this list;
# `extend-exclude` adds to it. A folder holding a `pyvenv.cfg` (a virtualenv) is skipped too.
DEFAULT_EXCLUDE = (
    ".bzr",
    ".codemod_cache",
    ".direnv",
    ".eggs",
    ".git",
    ".git-rewrite",
    ".hg",
    ".ipynb_checkpoints",
    ".mypy_cache",
    ".nox",
    ".pants.d",
    ".pyenv",
    ".pytest_cache",
    ".pytype",
    ".ruff_cache",
    ".svn",
    ".tox",
    ".venv",
    ".vscode",
    "__pycache__",
    "__pypackages__",
    "_build",
    "buck-out",
    "build",
    "dist",
    "node_modules",
    "site-packages",
    "venv",
)
# The files a walk takes, by name (ruff's default `include`, less stubs): `include` in the config
# replaces it, `extend-include` adds to it. A file named on the command line is always taken.
DEFAULT_INCLUDE = ("*.py", "*.ipynb")
# An ignore file bigger than this is not read (a warning says so): a .gitignore is a few KiB,
# and one that is a link to /dev/zero or a 2 GB blob must not cost the run its memory.
MAX_IGNORE_FILE_BYTES = 1 * 2**20
_GLOB_CHARS = frozenset("*?[]!\\")


class Patterns(NamedTuple):
    """Gitignore-style patterns relative to ``base`` (an absolute, resolved folder)."""

    base: str
    patterns: tuple[str, ...]
    # Where they come from, for --show-settings: "default", "--exclude", "pyproject.toml: exclude".
    source: str = ""

    @classmethod
    def at(cls, base: str, patterns: Iterable[str], source: str = "") -> Patterns:
        return cls(os.path.realpath(base), tuple(p for p in patterns if p.strip()), source)


class _Matcher:
    """One ``Patterns`` compiled: plain names are a set lookup, the rest goes to wildmatch."""

    def __init__(self, group: Patterns) -> None:
        self.group = group
        self.prefix = group.base.rstrip(os.sep) + os.sep
        # With a negation (`!keep.py`) the order of the patterns matters: all go to wildmatch.
        plain = [] if any(p.startswith("!") for p in group.patterns) else [p for p in group.patterns if _plain(p)]
        self.names = frozenset(p.rstrip("/") for p in plain)
        self.names_dirs_only = frozenset(p.rstrip("/") for p in plain if p.endswith("/"))
        self.globs = tuple(p for p in group.patterns if p not in plain)
        self._spec: wildmatch.GitIgnore | None = None

    @property
    def spec(self) -> wildmatch.GitIgnore:
        if self._spec is None:
            self._spec = wildmatch.GitIgnore.from_lines(self.globs)
        return self._spec

    def relative(self, real: str) -> str | None:
        if real.startswith(self.prefix):
            return real[len(self.prefix):].replace(os.sep, "/")
        return None

    def match(self, real: str, is_dir: bool, whole_path: bool = False) -> bool:
        """Whether ``real`` is excluded: by its own name (a walk tests each entry), or with
        ``whole_path`` by any folder on its way from the base too (a path named directly)."""
        relative = self.relative(real)
        name = os.path.basename(real)
        if self.names:
            components = relative.split("/") if whole_path and relative else [name]
            last = len(components) - 1
            for index, component in enumerate(components):
                if component in self.names and (
                    component not in self.names_dirs_only or index < last or is_dir
                ):
                    return True
        if not self.globs:
            return False
        target = relative if relative is not None else name
        return self.spec.check(target, is_dir) is True

    def without_matches_of(self, real_root: str) -> _Matcher:
        """These patterns less those that exclude ``real_root`` itself: a folder the user names is walked."""
        kept = [p for p in self.group.patterns if not _Matcher(Patterns(self.group.base, (p,))).match(real_root, True, True)]
        if len(kept) == len(self.group.patterns):
            return self
        return _Matcher(Patterns(self.group.base, tuple(kept), self.group.source))


def _plain(pattern: str) -> bool:
    """A bare name (``build``, ``.venv/``): matched at any depth, no glob machinery needed."""
    body = pattern.removesuffix("/")
    return bool(body) and "/" not in body and not (_GLOB_CHARS & set(body))


class Discovery:
    """What ``discover`` found (a plain class: a dataclass costs start-up time)."""

    def __init__(self) -> None:
        self.files: list[str] = []
        # The resolved path of each of ``files``, in the same order (the walk knows them).
        self.real_paths: list[str] = []
        # (path, reason) for named paths that do not exist, cannot be read or are refused.
        self.errors: list[tuple[str, str]] = []
        # (path, reason) for things skipped that a user may not expect: an ignore file too big to read.
        self.warnings: list[tuple[str, str]] = []


def discover(
    roots: Iterable[str],
    exclude: Iterable[str | Patterns] | None = None,
    *,
    force_exclude: bool = False,
    allowed: Sequence[str] | None = None,
    include: Sequence[str] = DEFAULT_INCLUDE,
    respect_gitignore: bool = True,
    venv_markers: bool = True,
) -> Discovery:
    """Python files under ``roots``, in a stable order, each once.

    ``exclude``: ``Patterns``, or plain strings relative to the working directory (default:
    ``DEFAULT_EXCLUDE`` there; a caller that passes its own adds the defaults it wants). A file or
    folder named in ``roots`` is taken as named, unless ``force_exclude``. Under a folder:
    ``*.py`` files, honouring git's ignore files and the excludes, never following a symlink
    out of the root or into a loop. A named file that is (or goes through) a symlink resolving
    outside every folder in ``allowed`` (default: the working directory and the folders among
    ``roots``) and outside its own project (its git repository, else its folder) is refused:
    codemod writes only inside the roots.

    Without ``respect_gitignore`` the tree's ``.gitignore`` files are not read (``.git/info/exclude``
    and the global excludes file, which no commit can change, still are); without ``venv_markers``
    a folder holding a ``pyvenv.cfg`` is walked like any other. A trusted ``--config`` turns both
    off (``Group.respect_gitignore``): files a pull request commits cannot hide themselves.
    """
    roots = list(roots)
    if exclude is None:
        exclude = [Patterns.at(os.getcwd(), DEFAULT_EXCLUDE, "default")]
    matchers = [_Matcher(_as_patterns(group)) for group in exclude]
    matchers = [m for m in matchers if m.group.patterns]
    if allowed is None:
        allowed = [os.getcwd(), *trusted_folders(roots)]
    allowed_real = [os.path.realpath(base) for base in allowed]
    result = Discovery()
    seen: set[str] = set()
    for root in roots:
        if not os.path.lexists(root):
            result.errors.append((root, "no such file or directory"))
            continue
        real = os.path.realpath(root)
        is_dir = os.path.isdir(root)
        if force_exclude and any(m.match(real, is_dir, whole_path=True) for m in matchers):
            continue
        if (real != os.path.abspath(root) if not is_dir else through_link(root)) and not any(
            _inside(real, base) for base in [*allowed_real, _project_of(root)]
        ):
            result.errors.append(
                (root, f"refused: a symlink to {real}, outside every root (the paths named and the working directory)")
            )
            continue
        if is_dir:
            found: Iterable[tuple[str, str]] = _walk_root(root, matchers, result, _includer(tuple(include)),
                                                          respect_gitignore, venv_markers)
        else:
            found = [(root, real)]
        for path, real_path in found:
            if real_path not in seen:
                seen.add(real_path)
                result.files.append(path)
                result.real_paths.append(real_path)
    return result


def trusted_folders(paths: Iterable[str]) -> list[str]:
    """The folders among ``paths`` that a named symlink may lead into: those that do not go through
    a link themselves (a link the tree planted must not widen where codemod may write)."""
    return [path for path in paths if os.path.isdir(path) and not through_link(path)]


def through_link(path: str) -> bool:
    """Whether ``path`` is a symbolic link, or goes through one inside the working directory or
    its own project (the links an analysed tree could have planted)."""
    absolute = os.path.abspath(path)
    return os.path.islink(absolute) or linked_folder(absolute, [os.getcwd(), _project_of(absolute)]) is not None


def linked_folder(path: str, trees: Iterable[str]) -> str | None:
    """The first folder on the way to ``path`` that is a symbolic link and lies inside one of
    ``trees`` (compared lexically: a tree's own links are what is looked for), else None."""
    anchors = [os.path.abspath(tree).rstrip(os.sep) + os.sep for tree in trees]
    parts = os.path.dirname(os.path.abspath(path)).split(os.sep)
    for depth in range(2, len(parts) + 1):
        prefix = os.sep.join(parts[:depth])
        if any(prefix.startswith(anchor) for anchor in anchors) and os.path.islink(prefix):
            return prefix
    return None


def _project_of(path: str) -> str:
    """The git repository a named file is in (its top, found lexically), else its folder."""
    folder = os.path.dirname(os.path.abspath(path))
    current = folder
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return os.path.realpath(current)
        parent = os.path.dirname(current)
        if parent == current:
            return os.path.realpath(folder)
        current = parent


def _as_patterns(group: str | Patterns) -> Patterns:
    return group if isinstance(group, Patterns) else Patterns.at(os.getcwd(), [group], "--exclude")


def matches(patterns: Patterns, path: str) -> bool:
    """Whether ``path`` or a folder it is in (below the patterns' base) matches ``patterns``."""
    return _matcher(patterns).match(os.path.realpath(path), os.path.isdir(path), whole_path=True)


@lru_cache(maxsize=256)
def _matcher(patterns: Patterns) -> _Matcher:
    return _Matcher(patterns)


@lru_cache(maxsize=16)
def _includer(include: tuple[str, ...]):
    """``name -> bool`` for ``include`` (file-name globs): a suffix test for plain ``*.ext`` ones."""
    suffixes = tuple(p[1:] for p in include if p.startswith("*.") and not (_GLOB_CHARS & set(p[1:])))
    globs = [p for p in include if p[1:] not in suffixes]
    if not globs:
        return lambda name: name.endswith(suffixes)
    import fnmatch

    return lambda name: name.endswith(suffixes) or any(fnmatch.fnmatchcase(name, glob) for glob in globs)


def _walk_root(root: str, matchers: list[_Matcher], result: Discovery, included=None, respect_gitignore=True,
               venv_markers=True) -> Iterator[tuple[str, str]]:
    """(path, real path) of each file; real paths come from the directory's, not a realpath call per file."""
    real_root = os.path.realpath(root)
    ignores = _ancestor_ignores(real_root, result, respect_gitignore)
    if ignores and _ignored(real_root, True, ignores):
        # The user named an ignored folder (a virtualenv's site-packages, say): they mean it.
        ignores = []
    matchers = [m.without_matches_of(real_root) for m in matchers]
    visited: set[str] = set()
    trees = (respect_gitignore, venv_markers)
    yield from _walk(root, real_root, real_root, ignores, matchers, visited, result, included or _includer(DEFAULT_INCLUDE),
                     trees)


def _walk(directory, real_dir, real_root, ignores, matchers, visited, result, included,
          trees=(True, True)) -> Iterator[tuple[str, str]]:
    """``trees``: (whether the tree's .gitignore files are read, whether pyvenv.cfg marks a virtualenv)."""
    if real_dir in visited:
        return
    visited.add(real_dir)
    local_ignore = _load_ignore_file(os.path.join(directory, ".gitignore"), result, follow=False) if trees[0] else None
    if local_ignore is not None:
        ignores = [*ignores, (real_dir, local_ignore)]
    try:
        entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
    except OSError as error:
        result.errors.append((directory, f"cannot list directory: {error.strerror}"))
        return
    for entry in entries:
        path = entry.path
        try:
            is_dir = entry.is_dir()
            is_file = entry.is_file()
        except OSError:
            continue
        if not (is_dir or (is_file and included(entry.name))):
            continue
        if entry.is_symlink():
            real = os.path.realpath(path)
            if not _inside(real, real_root):
                continue
        else:
            real = os.path.join(real_dir, entry.name)
        if any(m.match(real, is_dir) for m in matchers):
            continue
        if is_dir:
            if (trees[1] and _is_virtualenv(path)) or _ignored(real, True, ignores):
                continue
            yield from _walk(path, real, real_root, ignores, matchers, visited, result, included, trees)
        elif not _ignored(real, False, ignores):
            yield path, real


def _is_virtualenv(path: str) -> bool:
    return os.path.exists(os.path.join(path, "pyvenv.cfg"))


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _load_ignore_file(path: str, result: Discovery, follow: bool) -> wildmatch.GitIgnore | None:
    """An ignore file's patterns, read only when it is a regular file of at most MAX_IGNORE_FILE_BYTES.

    A FIFO would block the run and a link to /dev/zero would never end: the file is opened
    without blocking and checked with fstat before a byte is read. Inside the tree a symlinked
    ``.gitignore`` is not followed, as git (2.32+) does not follow it.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as error:
        if os.path.islink(path):
            result.warnings.append((path, "not read: a symbolic link (git does not follow it either)"))
        elif not isinstance(error, (NotADirectoryError, IsADirectoryError)):
            result.warnings.append((path, f"not read: {error.strerror or error}"))
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            result.warnings.append((path, "not read: not a regular file"))
            return None
        if info.st_size > MAX_IGNORE_FILE_BYTES:
            limit = MAX_IGNORE_FILE_BYTES // 2**20
            result.warnings.append((path, f"not read: larger than the {limit} MiB limit for an ignore file"))
            return None
        with os.fdopen(os.dup(fd), "rb") as handle:
            data = handle.read(MAX_IGNORE_FILE_BYTES + 1)[:MAX_IGNORE_FILE_BYTES]
    except OSError as error:
        result.warnings.append((path, f"not read: {error.strerror or error}"))
        return None
    finally:
        os.close(fd)
    lines = data.decode("utf-8", "replace").splitlines()
    refused = wildmatch.too_many(line for line in lines if line.strip() and not line.startswith("#"))
    if refused:
        result.warnings.append((path, f"not read: {refused} (the limit for an ignore file)"))
        return None
    return wildmatch.GitIgnore.from_lines(lines)


def _ancestor_ignores(real_root: str, result: Discovery, respect_gitignore: bool = True) -> list:
    """Git's ignore files that apply above ``real_root``, lowest precedence first.

    The global excludes file and ``.git/info/exclude`` of the enclosing repository (both
    relative to the repository's top), then the .gitignore files from the top down to the
    root's parent (the root's own .gitignore is read by the walk).
    """
    chain: list[str] = []
    current = real_root
    while not os.path.exists(os.path.join(current, ".git")):
        parent = os.path.dirname(current)
        if parent == current:
            return []
        chain.append(parent)
        current = parent
    top = current
    ignores = []
    global_file = _global_excludes_file()
    for path, follow in ((global_file, True), (os.path.join(_git_dir(top), "info", "exclude"), True)):
        if path:
            spec = _load_ignore_file(path, result, follow=follow)
            if spec is not None:
                ignores.append((top, spec))
    for directory in reversed(chain if respect_gitignore else ()):
        spec = _load_ignore_file(os.path.join(directory, ".gitignore"), result, follow=False)
        if spec is not None:
            ignores.append((directory, spec))
    return ignores


def _git_dir(top: str) -> str:
    """The repository's git directory: ``.git``, or where a worktree's ``.git`` file points (its common dir)."""
    dot_git = os.path.join(top, ".git")
    if os.path.isdir(dot_git):
        return dot_git
    try:
        with open(dot_git, encoding="utf-8", errors="replace") as handle:
            line = handle.read(4096).strip()
    except OSError:
        return dot_git
    if not line.startswith("gitdir:"):
        return dot_git
    git_dir = os.path.join(top, line[len("gitdir:"):].strip())
    try:
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8", errors="replace") as handle:
            return os.path.normpath(os.path.join(git_dir, handle.read(4096).strip()))
    except OSError:
        return git_dir


@lru_cache(maxsize=1)
def _global_excludes_file() -> str | None:
    """``core.excludesFile`` from the user's global git config (git's default when unset).

    Only the global config is asked: the analysed repository's own ``.git/config`` must not
    choose what codemod reads (and git refuses to read one owned by another user anyway).
    """
    import subprocess  # ~5 ms; only a walk inside a git repository needs it

    try:
        done = subprocess.run(
            ["git", "config", "--global", "--path", "--get", "core.excludesFile"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
            stdin=subprocess.DEVNULL,
        )
        configured = done.stdout.strip() if done.returncode == 0 else ""
    except (OSError, subprocess.SubprocessError):
        configured = ""
    if configured:
        return os.path.abspath(os.path.expanduser(configured))
    config_home = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(config_home, "git", "ignore")


def _ignored(real: str, is_dir: bool, ignores) -> bool:
    """Git's rule: the deepest .gitignore with an opinion on the path (given resolved) decides."""
    for base, spec in reversed(ignores):
        relative = os.path.relpath(real, base)
        if relative.startswith(".."):
            continue
        verdict = spec.check(relative, is_dir)
        if verdict is not None:
            return verdict
    return False
