"""A content-hash cache of per-file results: a repeat run over an unchanged tree parses nothing.

An entry's key hashes the file's bytes and path with a fingerprint of everything else that can
change a result: the tool's own code and version, the Python and libcst versions (the parsers),
the selected rules with their options, and the fix policy. So the cache never changes a result;
it only skips recomputing one.

Only files that pass some rule's byte prefilter go through the cache: for the others the
engine's answer (no findings) is already cheaper than a cache lookup.

The cache directory may sit in (or come from) an untrusted checkout: a pull request can commit
a ``.codemod_cache/`` of its own, and every input of the key is public. So:

- every entry carries an HMAC-SHA256 made with a per-user secret key that lives outside any
  analysed tree (``$XDG_CACHE_HOME/codemod/secret-key``, else ``~/.cache/codemod/secret-key``,
  created on first use, mode 0600); an entry without a valid MAC is a miss, so nobody without
  that key can forge one, and an entry cannot be moved to another key;
- a hit that carries fixed bytes is re-validated before they are written, exactly as a fresh
  fix is (``FileResult.verify_with``; see ``runner.write_results``);
- the cache never follows a symbolic link: every directory and file is opened relative to its
  parent's descriptor with ``O_NOFOLLOW``, files are created with ``O_EXCL``, so a link planted
  as ``.codemod_cache``, ``CACHEDIR.TAG`` or an entry makes nothing outside the directory;
- entries are JSON, never pickle, read only when regular and smaller than a cap, and written
  to a temporary file renamed into place, so a concurrent run sees a whole entry or none.

An unreadable, damaged or unauthenticated entry is a miss; a cache that cannot be written is
silently skipped (it is an optimisation, never a reason to fail a run).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import importlib.util
import json
import os
import stat
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import jax_codemod
from jax_codemod.engine import project
from jax_codemod.engine.pipeline import (
    FileResult,
    Settings,
    file_active_rules,
    process_source,
    project_active,
)
from jax_codemod.rule import Finding, FixSafety, Span

ENV_VAR = "CODEMOD_CACHE_DIR"
DEFAULT_DIR_NAME = ".codemod_cache"
# Bump when the entry layout changes; old entries then simply miss.
FORMAT = "2"
_TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# This directory is a cache made by codemod.\n"
KEY_FILE = "secret-key"
KEY_BYTES = 32
# An entry holds at most one fixed file (<= 4 MiB, base64) plus its findings.
MAX_ENTRY_BYTES = 16 * 2**20
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """A hash of the tool's own sources, so editing a rule invalidates without a version bump."""
    digest = hashlib.sha256(f"{jax_codemod.__version__}\0{sys.version}\0{_libcst_version()}".encode())
    package = Path(jax_codemod.__file__).resolve().parent
    for source in sorted(package.rglob("*.py")):
        digest.update(source.relative_to(package).as_posix().encode() + b"\0")
        digest.update(source.read_bytes())
    return digest.hexdigest()


def _libcst_version() -> str:
    """A digest of libcst's version module, found without importing libcst or
    ``importlib.metadata`` (which alone costs ~18 ms of start-up in a run that opens the cache)."""
    try:
        spec = importlib.util.find_spec("libcst")
        folder = os.path.dirname(spec.origin) if spec is not None and spec.origin else None
        if folder is None:
            return "unknown"
        return hashlib.blake2b(Path(folder, "_version.py").read_bytes(), digest_size=16).hexdigest()
    except (OSError, ImportError, ValueError):
        return "unknown"


def settings_fingerprint(settings: Settings) -> str:
    rules = [[type(rule).__module__, type(rule).__qualname__, rule.CODE, rule.options] for rule in settings.rules]
    document = {"code": code_fingerprint(), "rules": rules, "unsafe_fixes": settings.unsafe_fixes}
    return hashlib.sha256(json.dumps(document, sort_keys=True, default=repr).encode()).hexdigest()


def default_directory(config_path: str | None) -> str:
    """``$CODEMOD_CACHE_DIR``, else ``.codemod_cache`` beside the governing pyproject.toml, else in cwd."""
    if os.environ.get(ENV_VAR):
        return os.environ[ENV_VAR]
    base = os.path.dirname(os.path.abspath(config_path)) if config_path else os.getcwd()
    return os.path.join(base, DEFAULT_DIR_NAME)


def user_cache_home() -> str:
    """The user's cache directory (XDG): never inside an analysed tree unless the user says so."""
    configured = os.environ.get("XDG_CACHE_HOME", "")
    base = configured if os.path.isabs(configured) else os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "codemod")


def secret_key(home: str | None = None) -> bytes | None:
    """This user's cache key, created on first use; None (no cache) if it cannot be had safely."""
    home = home or user_cache_home()
    path = os.path.join(home, KEY_FILE)
    for _attempt in range(2):
        key = _read_key(path)
        if key is not None:
            return key
        try:
            os.makedirs(home, mode=0o700, exist_ok=True)
            _create_key(home, path)
        except OSError:
            return None
    return _read_key(path)


def _read_key(path: str) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        # Only a key nobody else could have written or read: a regular file of ours, 0600.
        if not stat.S_ISREG(info.st_mode) or info.st_mode & 0o077 or info.st_size != KEY_BYTES:
            return None
        if hasattr(os, "getuid") and info.st_uid != os.getuid():
            return None
        key = os.read(fd, KEY_BYTES + 1)
    finally:
        os.close(fd)
    return key if len(key) == KEY_BYTES else None


def _create_key(home: str, path: str) -> None:
    # Written whole under a private name, then linked into place: a concurrent first run reads
    # the complete key of whichever run linked first, never a half-written one.
    temporary = os.path.join(home, f".{KEY_FILE}.{os.getpid()}.{os.urandom(6).hex()}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(os.urandom(KEY_BYTES))
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(temporary, path)
        except FileExistsError:
            pass
    finally:
        os.unlink(temporary)


@dataclass
class _Gates:
    """A root's project-gate answers for this process's run (``Cache.gate``)."""

    state: str | None  # project.state_of(top); None: nothing is kept
    # relative path -> [digest of the file's bytes, codes of the rules its prefilter passed,
    # codes of those the gate added]
    answers: dict[str, list]
    new: dict[str, list]  # the answers found by this process, not yet written or handed over


# (cache directory, settings fingerprint, root) -> its answers; ``forget_gates`` clears them.
_gates: dict[tuple[str, str, str], _Gates] = {}


def forget_gates() -> None:
    """Drop the gate answers this process holds (each run reads the roots' states afresh)."""
    _gates.clear()


@dataclass(frozen=True)
class Cache:
    directory: str
    fingerprint: str
    # The per-user MAC key; None when none could be had: the cache is then off.
    secret: bytes | None = field(default=None, repr=False)

    @classmethod
    def open(cls, directory: str, settings: Settings) -> Cache:
        return cls(os.path.abspath(directory), settings_fingerprint(settings), secret_key())

    def process(self, source: bytes, path: str, settings: Settings, active=None) -> FileResult:
        """``process_source``, answered from the cache when this exact input was seen before.

        ``active``: the rules whose prefilter passes ``source``, if the caller knows them.
        """
        if active is None:
            active = self.active_rules(path, source, settings.rules)
        if self.secret is None or not active:
            return process_source(source, path, settings, active)
        key = self.key(source, path, active)
        cached = self.load(key, source, path)
        if cached is not None:
            if cached.fixed is not None:
                cached.verify_with = settings  # checked again before anything is written
            return cached
        result = process_source(source, path, settings, active, text_depends=True)
        if result.error is None:
            self.store(key, result)
        return result

    def forget_gates(self) -> None:
        """``forget_gates``: each run reads its roots' states afresh."""
        forget_gates()

    def active_rules(self, path: str, source: bytes, rules) -> tuple:
        """``file_active_rules``, with the project gate's answers kept (``gate``)."""
        return file_active_rules(path, source, rules, self.gate)

    def gate(self, path: str, source: bytes, rules, active: tuple) -> tuple:
        """``project_active``, answered from what an earlier run found for the same bytes of
        the file while its root held the same files in the same states (``project.state_of``).

        The gate reads other modules' texts, so its answer for a file rests on the whole root;
        a warm run over an unchanged tree would otherwise spend most of its time asking it
        again. The answers of a root are kept in one entry (``save_gates`` writes it), not one
        per file: every edit in the root changes the state, and per-file entries would then
        leave the whole root's worth behind at each edit."""
        place = project.locate(path) if self.secret is not None else None
        gates = self._gates_of(place[0]) if place is not None else None
        if gates is None or gates.state is None:  # no cache, no project, or a root changing now
            return project_active(path, source, rules, active)
        digest = hashlib.blake2b(source, digest_size=16).hexdigest()
        base = [rule.CODE for rule in active]
        known = gates.answers.get(place[1])
        if known is not None and known[0] == digest and known[1] == base:
            more = set(known[2])
            return tuple(rule for rule in rules if rule in active or rule.CODE in more)
        found = project_active(path, source, rules, active)
        gates.answers[place[1]] = gates.new[place[1]] = [digest, base, [r.CODE for r in found if r not in active]]
        return found

    def _gates_of(self, top: str) -> _Gates:
        key = (self.directory, self.fingerprint, top)
        gates = _gates.get(key)
        state = project.state_of(top)  # kept for the run: a new run reads it afresh
        if gates is None or gates.state != state:
            answers = self._load_gates(top, state) if state is not None else None
            gates = _gates[key] = _Gates(state, answers or {}, {})
        return gates

    def _unwritten(self):
        """(root, its answers) of this cache where this process found answers not yet written
        or handed over, under a state that keeps them."""
        for (directory, fingerprint, top), gates in _gates.items():
            if directory == self.directory and fingerprint == self.fingerprint and gates.new and gates.state:
                yield top, gates

    def _gates_key(self, top: str) -> str:
        digest = hashlib.sha256(self.fingerprint.encode() + b"\0gate\0")
        digest.update(os.path.normpath(top).encode("utf-8", "surrogateescape"))
        return digest.hexdigest()

    def _load_gates(self, top: str, state: str) -> dict | None:
        document = self._read_document(self._gates_key(top))
        if document is None or document.get("state") != state or not isinstance(document.get("answers"), dict):
            return None
        return document["answers"]

    def new_gates(self) -> list[tuple[str, str, dict]]:
        """The answers this process found since last asked, as (root, state, answers): a pool's
        workers hand theirs to the parent, the one process that writes the entries."""
        found = []
        for top, gates in self._unwritten():
            found.append((top, gates.state, gates.new))
            gates.new = {}
        return found

    def add_gates(self, found: list[tuple[str, str, dict]]) -> None:
        """Take a worker's ``new_gates``: kept where this process sees the root in that state."""
        for top, state, answers in found:
            gates = self._gates_of(top)
            if gates.state == state:
                gates.answers.update(answers)
                gates.new.update(answers)

    def save_gates(self) -> None:
        """Write each root's answers where this run found new ones (one entry per root)."""
        for top, gates in self._unwritten():
            self._write_document(self._gates_key(top), {"state": gates.state, "answers": gates.answers})
            gates.new = {}

    def key(self, source: bytes, path: str, active=()) -> str:
        digest = hashlib.sha256(self.fingerprint.encode())
        # The path is part of the key so no rule can see a result computed for another file.
        digest.update(b"\0" + os.path.normpath(path).encode("utf-8", "surrogateescape") + b"\0")
        # And its root, which what the run names decides for a file with no project marker
        # (``project.root_of``): the modules a result read are named relative to it.
        digest.update(project.root_of(path).encode("utf-8", "surrogateescape") + b"\0")
        # So are the rules that checked it: the same bytes are checked by more of them once
        # another module of the project leads to an export or an access (``project_prefilter``).
        digest.update(",".join(rule.CODE for rule in active).encode() + b"\0")
        digest.update(source)
        return digest.hexdigest()

    def _mac(self, key: str, body: bytes) -> str:
        return hmac.new(self.secret, FORMAT.encode() + b"\0" + key.encode() + b"\0" + body, hashlib.sha256).hexdigest()

    def _location(self, key: str) -> tuple[list[str], str]:
        return [FORMAT, key[:2]], key[2:] + ".json"

    def load(self, key: str, source: bytes, path: str) -> FileResult | None:
        document = self._read_document(key)
        if document is None:
            return None
        try:
            findings = [_finding(item, path) for item in document["findings"]]
            fixed = base64.b64decode(document["fixed"], validate=True) if document["fixed"] is not None else None
            depends = dict(document.get("depends") or {})
        except (ValueError, KeyError, TypeError):
            return None
        if depends and not _unchanged(path, depends):
            return None  # a module of the project it read has changed since
        # An entry that claims a fix must say which finding it fixes, and the reverse.
        if (fixed is not None) != any(finding.applied for finding in findings) or fixed == source:
            return None
        return FileResult(path=path, findings=findings, source=source, fixed=fixed, depends=depends)

    def store(self, key: str, result: FileResult) -> None:
        self._write_document(key, {
            "findings": [_finding_json(finding) for finding in result.findings],
            "fixed": base64.b64encode(result.fixed).decode("ascii") if result.fixed is not None else None,
            "depends": result.depends,
        })

    def _read_document(self, key: str) -> dict | None:
        """The JSON object stored under ``key``; None when there is none, or it is damaged or
        not authenticated."""
        if self.secret is None:
            return None
        folders, name = self._location(key)
        try:
            data = _read_entry(self.directory, folders, name)
            if data is None:
                return None
            mac, _, body = data.partition(b"\n")
            if not hmac.compare_digest(mac, self._mac(key, body).encode()):
                return None
            document = json.loads(body)
        except (OSError, ValueError):
            return None
        return document if isinstance(document, dict) else None

    def _write_document(self, key: str, document: dict) -> None:
        if self.secret is None:
            return
        folders, name = self._location(key)
        try:
            body = json.dumps(document).encode("utf-8", "surrogateescape")
            _write_entry(self.directory, folders, name, self._mac(key, body).encode() + b"\n" + body)
        except (OSError, UnicodeError):
            pass


def _open_directory(name: str, parent: int | None, create: bool) -> int:
    """A descriptor of directory ``name`` (in ``parent``), never through a symbolic link."""
    flags = os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC
    try:
        return os.open(name, flags, dir_fd=parent)
    except FileNotFoundError:
        if not create:
            raise
    try:
        os.mkdir(name, 0o755, dir_fd=parent)
    except FileExistsError:
        pass
    return os.open(name, flags, dir_fd=parent)


def _walk(directory: str, folders: list[str], create: bool) -> tuple[int, list[int]]:
    """(descriptor of the innermost folder, every descriptor opened) for ``directory/folders``."""
    parent, base = os.path.split(directory)
    if create:
        os.makedirs(parent, exist_ok=True)  # above the cache: the user's own path
    opened: list[int] = []
    try:
        top = os.open(parent, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
        opened.append(top)
        fd = _open_directory(base, top, create)
        opened.append(fd)
        if create:
            _mark(fd)
        for folder in folders:
            fd = _open_directory(folder, fd, create)
            opened.append(fd)
    except BaseException:
        for descriptor in opened:
            os.close(descriptor)
        raise
    return fd, opened


def _read_entry(directory: str, folders: list[str], name: str) -> bytes | None:
    try:
        folder, opened = _walk(directory, folders, create=False)
    except FileNotFoundError:
        return None
    try:
        fd = os.open(name, os.O_RDONLY | _NOFOLLOW | _CLOEXEC, dir_fd=folder)
    except FileNotFoundError:
        return None
    finally:
        for descriptor in opened:
            os.close(descriptor)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_ENTRY_BYTES:
            return None
        return handle.read(MAX_ENTRY_BYTES + 1)


def _write_entry(directory: str, folders: list[str], name: str, data: bytes) -> None:
    folder, opened = _walk(directory, folders, create=True)
    try:
        temporary = f".{os.urandom(8).hex()}.tmp"
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o644, dir_fd=folder)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            # A rename replaces whatever has the entry's name, a link included, and never
            # follows it: the entry lands in this folder and nowhere else.
            os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            try:
                os.unlink(temporary, dir_fd=folder)
            except OSError:
                pass
            raise
    finally:
        for descriptor in opened:
            os.close(descriptor)


def _mark(fd: int) -> None:
    """Keep the cache out of git and out of backups, as ruff and pytest do."""
    for name, content in (("CACHEDIR.TAG", _TAG), (".gitignore", "# Created by codemod.\n*\n")):
        try:
            marker = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o644, dir_fd=fd)
        except FileExistsError:
            continue  # whatever is there (even a link) stays untouched: never written through
        with os.fdopen(marker, "w", encoding="utf-8") as handle:
            handle.write(content)


def _unchanged(path: str, depends: dict[str, str]) -> bool:
    """Whether every module of the project a cached result read still has the bytes it read,
    and each name a module added since could answer for still resolves as it did
    (``View.absent``)."""
    top = project.root_of(path)
    return all(
        isinstance(relative, str)
        and (
            project.resolves_as(top, relative, digest)
            if project.is_resolution(relative)
            else project.digest_of(top, relative) == digest
        )
        for relative, digest in depends.items()
    )



def _finding_json(finding: Finding) -> dict:
    span = finding.span
    return {
        "code": finding.code,
        "name": finding.name,
        "line": finding.line,
        "column": finding.column,
        "message": finding.message,
        "fix": finding.fix.value,
        "span": [span.start_line, span.start_column, span.end_line, span.end_column],
        "node_type": finding.node_type,
        "applied": finding.applied,
        "resolved_by": finding.resolved_by,
        "cell": finding.cell,
    }


def _finding(item: dict, path: str) -> Finding:
    # ``data`` is scratch space for the rule's rewrite, which a cached result never needs.
    return Finding(
        code=item["code"],
        name=item["name"],
        path=path,
        line=item["line"],
        column=item["column"],
        message=item["message"],
        fix=FixSafety(item["fix"]),
        span=Span(*item["span"]),
        node_type=item["node_type"],
        applied=item["applied"],
        resolved_by=item.get("resolved_by"),
        cell=item.get("cell"),
    )
