"""Each checked file's project: where its root is, what the root holds, reading its modules.

The analysis reads names a file imports from the other modules of its project through an
``analysis.project.View``; this module makes one per checked file. The root of a file is the
nearest folder at or above it that marks a project (``pyproject.toml``, ``setup.py``,
``setup.cfg``, a git checkout): so a file gets the same root, and the same findings, whether
the run names it, its folder or the whole tree (the pre-commit hook, ``--stdin-filename``,
``--shard``). A file with no marker above it has the folder named on the command line that holds
it, or its own folder: never the working directory's tree unless that was named (a two-file
project checked from a folder with 78,000 files below it lists two files, not 78,000). A file
inside a package (named, or in a named folder inside it) has the folder above its packages as
its root, as Python imports it, listed only within its outermost package (``scoped``): the
package's modules are found by their names, the folders beside it are never read.

Reading is bounded as the engine's own is: regular files only (a FIFO named ``x.py`` never
blocks the run), no symlinked folder is walked, no file over the parse limit is read, at most
``MAX_ROOT_FILES`` files listed. Every module read is recorded with its digest
(``reads``), so a cached result is reused only while the modules it read are unchanged.
"""

from __future__ import annotations

import io
import os
import stat
import time
import tokenize
from collections.abc import Iterable

from jax_codemod.analysis.project import ABSENT, Root, View, absent_name, forget_trees, resolution

try:
    # hashlib's own blake2b: imported alone, without hashlib's OpenSSL bindings (4 ms of every
    # process's start, the pool's workers' too; a run that never reads a digest pays nothing else).
    from _blake2 import blake2b
except ImportError:  # another Python implementation
    from hashlib import blake2b

# Above this many Python files a root is listed no further (its other modules are then outside
# what the analysis reads, as third-party ones are); real monorepos hold a few tens of thousands.
MAX_ROOT_FILES = 50_000
# The largest module read (the pipeline's parse limit).
MAX_MODULE_BYTES = 4 * 2**20
PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
# Folders no import reaches into: tools' state and other environments' packages.
SKIPPED_FOLDERS = frozenset({"__pycache__", "node_modules", "site-packages", "dist-packages"})
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)

_roots: dict[str, Root] = {}  # root folder -> Root, for this process's run
_last_root: Root | None = None  # the root of the last file given a view
_interleaved = False  # this process checks several roots' files in turn (``roots_interleave``)
_marked: dict[str, str | None] = {}  # folder -> its nearest marked folder, for this run
_package_tops: dict[str, str] = {}  # folder -> the first folder at or above it that is no package, for this run
_tops: dict[str, str] = {}  # folder -> the root of its files, for this run (and these named folders)
_named: tuple[str, ...] = ()  # the folders named on the command line, absolute (``name_paths``)
_digests: dict[tuple[str, str], str] = {}  # (root, module) -> digest_of's answer, for this run
_states: dict[str, str | None] = {}  # root -> state_of's answer, for this run
_listings: dict[str, list[tuple[str, os.DirEntry]]] = {}  # root -> _listing's answer, for this run
_last_located: tuple = (None, None)  # ((path, working directory), locate's answer) of the last file
# How long after a file's last change its root's state is not trusted (state_of).
RACY_NS = 2 * 10**9


def root_of(path: str) -> str:
    """The project root of the file at ``path`` (absolute, normalised): the nearest folder at or
    above it with a project marker; without one, the highest named folder that holds it
    (``name_paths``), or its own folder; in a package (named or not), the first folder above the
    packages (where ``python main.py`` beside them, or pytest's default import mode, puts the
    path's start), ``scoped`` to the outermost package. Compare roots as strings; ``folder_of``
    says where one lies."""
    return _root_of_absolute(os.path.abspath(path))


def name_paths(paths: Iterable[str]) -> None:
    """Say which paths the run was given (the command line's; ``.`` when none): a named folder
    is the root of the files under it that have no project marker above them. A named file, or
    stdin's file name, names no folder: such a file's root is its own folder, above its
    packages. Set before the files are checked (a pool's workers inherit it, or get it from
    ``named``)."""
    global _named, _last_located
    named = tuple(sorted({os.path.abspath(path) for path in paths if os.path.isdir(path)}))
    if named != _named:
        _named = named
        _tops.clear()
        _last_located = (None, None)


def named() -> tuple[str, ...]:
    """The folders ``name_paths`` was given, to hand to a process that does not inherit them."""
    return _named


def _root_of_absolute(path: str) -> str:
    folder = os.path.dirname(path)
    found = _tops.get(folder)
    if found is None:
        found = _tops[folder] = _root_of_folder(folder)
    return found


def _root_of_folder(folder: str) -> str:
    marked = _marked_root(folder)
    if marked is not None:
        return marked
    above = _above_packages(folder)
    for top in _named:  # sorted: the first that holds the folder is the highest
        if folder == top or folder.startswith(top.rstrip(os.sep) + os.sep):
            if len(top) <= len(above):
                return top  # a named folder at or above the packages: all of it was named
            break
    if folder == above:
        return folder  # in no package: its own folder
    # Inside a package: the folder above the packages (so `import pkg.data` resolves), listed
    # within the outermost package only (its siblings are nobody's business).
    outermost = folder[len(above.rstrip(os.sep)) + 1 :].split(os.sep, 1)[0]
    return scoped(above, outermost)


# A root listed within one of its folders only: "TOP\0FOLDER" (no path holds a NUL).
_SCOPE = "\0"


def scoped(top: str, folder: str) -> str:
    """The root at ``top`` listed within its ``folder`` (a posix relative path) only."""
    return f"{top}{_SCOPE}{folder}"


def folder_of(root: str) -> tuple[str, str]:
    """(the folder a root's relative paths start from, the folder within it that is listed, ""
    for all of it) of a root as ``root_of`` names it."""
    top, _, scope = root.partition(_SCOPE)
    return top, scope


def _above_packages(folder: str) -> str:
    """The first folder at or above ``folder`` without an ``__init__.py`` (asked once per folder
    in a run: a package's folders share their parent's answer)."""
    found = _package_tops.get(folder)
    if found is None:
        parent = os.path.dirname(folder)
        found = _above_packages(parent) if parent != folder and os.path.lexists(os.path.join(folder, "__init__.py")) else folder
        _package_tops[folder] = found
    return found


def _marked_root(folder: str) -> str | None:
    """The nearest folder at or above ``folder`` with a project marker (asked once per folder
    in a run: the files of one folder share it)."""
    if folder in _marked:
        return _marked[folder]
    if any(os.path.lexists(os.path.join(folder, marker)) for marker in PROJECT_MARKERS):
        found = folder
    else:
        parent = os.path.dirname(folder)
        found = _marked_root(parent) if parent != folder else None
    _marked[folder] = found
    return found


def view_for(path: str) -> View | None:
    """The view of its project for the checked file at ``path``; None for what has no project
    (stdin without a file name)."""
    global _last_root
    place = locate(path)
    if place is None:
        return None
    top, under = place
    root = _root(top)
    if root is not _last_root:
        # A serial run checks the files of a root in a row: the trees kept for the last root
        # are of no more use, and held they raise the peak memory of every later file (warp's
        # trees through all of jax's). A pool's worker gets chunks that mix roots
        # (``roots_interleave``): there they are kept, within the one budget, or every switch
        # parses the same modules again.
        if _last_root is not None and not _interleaved:
            forget_trees()
        _last_root = root
    return View(root, under)


def root_for(path: str) -> tuple[Root, str] | None:
    """The root of the checked file at ``path`` and the file's path in it (``view_for``'s,
    without a view: the gate asks most files only whether their import lines name the root)."""
    place = locate(path)
    return None if place is None else (_root(place[0]), place[1])


def prepare(paths: Iterable[str]) -> None:
    """Find the roots of the files at ``paths`` and list them here, once per folder: before a
    pool forks, so that its workers inherit them. Each worker checks files of most roots (chunks
    are cut by size) and would find and list each root again: on the bench tree's 45 roots, ~20 ms
    of every worker's CPU. What is per file (a file's place in its root) is left to the worker
    that checks it."""
    seen: set[str] = set()
    for path in paths:
        folder = os.path.dirname(path)
        if folder in seen:
            continue
        seen.add(folder)
        place = root_for(path)
        if place is not None:
            place[0].prepare(place[1])


def roots_interleave() -> None:
    """Say that this process checks the files of several roots in turn (a pool's worker)."""
    global _interleaved
    _interleaved = True


def _root(top: str) -> Root:
    root = _roots.get(top)
    if root is None:
        root = _roots[top] = Root(
            lambda: list_files(top), lambda relative: read_module(top, relative), lambda relative: read_raw(top, relative)
        )
    return root


def is_resolution(key: str) -> bool:
    """Whether a ``depends`` key is a name's resolution (``View.absent``), not a module path."""
    return key.startswith(ABSENT)


def resolves_as(top: str, key: str, found: str) -> bool:
    """Whether the name of ``key`` (``View.absent``) still resolves as ``found`` says in the
    root at ``top``."""
    importer, qualified = absent_name(key)
    return resolution(_root(top).module_of(qualified, importer)) == found


def locate(path: str) -> tuple[str, str] | None:
    """(root, the file's relative posix path in it) of the checked file at ``path``; None for
    what has no project (stdin without a file name). A notebook has one, as a script has: its
    cells import the modules beside it (Jupyter runs it in its folder), though nothing imports it."""
    if not path.endswith((".py", ".pyi", ".ipynb")) or path.startswith("<"):
        return None  # a notebook is checked as its cells' module, beside the modules it imports
    global _last_located
    key = (path, os.getcwd())
    if _last_located[0] == key:
        return _last_located[1]  # the gate, then the check, ask of the same file in a row
    absolute = os.path.abspath(path)
    root = _root_of_absolute(absolute)
    top = folder_of(root)[0]
    # (A root is a folder above the file: os.path.relpath's answer, by string work.)
    inside = absolute.startswith(top.rstrip(os.sep) + os.sep)
    under = absolute[len(top.rstrip(os.sep)) + 1 :] if inside else os.path.relpath(absolute, top)
    found = root, under.replace(os.sep, "/") if os.sep != "/" else under
    _last_located = (key, found)
    return found


def forget_roots() -> None:
    """Drop what this process knows of every root (tests that rewrite a tree between runs)."""
    global _last_root, _last_located
    _last_root = None
    _last_located = (None, None)
    _roots.clear()
    _marked.clear()
    _package_tops.clear()
    _tops.clear()
    _digests.clear()
    _states.clear()
    _listings.clear()
    forget_trees()


def list_files(top: str) -> list[str]:
    """The Python files under ``top``, relative posix paths: no hidden folder, no folder of
    another environment (one with ``pyvenv.cfg``), no symlinked folder, at most MAX_ROOT_FILES."""
    return [relative for relative, _entry in _listing(top)]


def state_of(top: str) -> str | None:
    """A digest of what the root at ``top`` holds now, from each listed file's path and status
    (size, inode, modification and change times): an edit, a new module, a removed or renamed
    one changes it. Answers that rest on every module of the root (the project gate's) are
    cached under it. None when a file changed within ``RACY_NS`` of now: a second edit within
    the file system's timestamp granularity could leave its status as it is (git's "racily
    clean" files), so no answer is kept under such a state. Kept for the run."""
    if top in _states:
        return _states[top]
    digest = blake2b(digest_size=16)
    recent = time.time_ns() - RACY_NS
    state: str | None = None
    try:
        for relative, entry in _listing(top):
            info = entry.stat(follow_symlinks=False)
            if max(info.st_mtime_ns, info.st_ctime_ns) >= recent:
                break
            digest.update(f"{relative}\0{info.st_size}\0{info.st_ino}\0{info.st_mtime_ns}\0{info.st_ctime_ns}\n".encode(
                "utf-8", "surrogateescape"
            ))
        else:
            state = digest.hexdigest()
    except OSError:
        pass  # a file gone while listed: the root is changing
    _states[top] = state
    return state


def _listing(top: str) -> list[tuple[str, os.DirEntry]]:
    """``list_files``' files with their directory entries, walked once a run (``state_of`` and
    the root's module map both need them)."""
    found = _listings.get(top)
    if found is None:
        found = _listings[top] = _walk(*folder_of(top))
    return found


def _walk(top: str, scope: str = "") -> list[tuple[str, os.DirEntry]]:
    found: list[tuple[str, os.DirEntry]] = []
    pending = [scope]
    while pending and len(found) < MAX_ROOT_FILES:
        relative = pending.pop()
        folder = os.path.join(top, relative) if relative else top
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except OSError:
            continue
        if relative and any(entry.name == "pyvenv.cfg" for entry in entries):
            continue
        for entry in entries:
            name = entry.name
            inner = f"{relative}/{name}" if relative else name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if not name.startswith(".") and name not in SKIPPED_FOLDERS:
                        pending.append(inner)
                elif name.endswith((".py", ".pyi")) and entry.is_file(follow_symlinks=False):
                    found.append((inner, entry))
            except OSError:
                continue
    return found[:MAX_ROOT_FILES]


def read_module(top: str, relative: str) -> tuple[str | None, str]:
    """(text, digest) of the root's module at ``relative``; text None when it cannot be read,
    is not a regular file, is too large or does not decode (the digest still says what was
    seen, for the cache)."""
    data = read_bytes(os.path.join(folder_of(top)[0], *relative.split("/")))
    if data is None:
        return None, "unreadable"
    digest = blake2b(data, digest_size=16).hexdigest()
    if data.isascii() and b"coding" not in b"\n".join(data.split(b"\n", 2)[:2]):
        # ASCII bytes without a coding cookie (only the first two lines may hold one) are
        # UTF-8: detect_encoding's Python would only say so, for most modules of a root.
        return data.decode("ascii"), digest
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding), digest
    except (SyntaxError, UnicodeDecodeError, LookupError, ValueError):
        return None, digest


def read_raw(top: str, relative: str) -> bytes | None:
    """The bytes of the root's module at ``relative`` as ``read_module`` reads them (None where it
    reads none), without a digest or decoding (``Root.holds_any``)."""
    return read_bytes(os.path.join(folder_of(top)[0], *relative.split("/")))


def read_bytes(path: str) -> bytes | None:
    """A regular file's bytes, up to the limit; None otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | _NONBLOCK | _NOFOLLOW | _CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_MODULE_BYTES:
            return None
        chunks = []
        left = MAX_MODULE_BYTES + 1
        while left > 0:
            chunk = os.read(fd, min(left, 2**20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        return data if len(data) <= MAX_MODULE_BYTES else None
    except OSError:
        return None
    finally:
        os.close(fd)


def digest_of(top: str, relative: str) -> str:
    """What ``read_module`` would record for the module now (the cache checks it). Kept for the
    run (``forget_roots``): the files of a package depend on the same modules, and a run's files
    do not change while it checks them."""
    key = (top, relative)
    found = _digests.get(key)
    if found is None:
        data = read_bytes(os.path.join(folder_of(top)[0], *relative.split("/")))
        found = _digests[key] = "unreadable" if data is None else blake2b(data, digest_size=16).hexdigest()
    return found
