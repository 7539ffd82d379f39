"""Running the engine over many files: parallel checking and safe, atomic writes."""

from __future__ import annotations

import errno
import os
import stat
import time
import zlib
from collections.abc import Callable, Iterable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from jax_codemod.engine import interrupts, posix, project
from jax_codemod.engine.discovery import linked_folder
from jax_codemod.engine.pipeline import (
    MAX_PARSE_BYTES,
    FileError,
    FileResult,
    Settings,
    SourceTooLarge,
    file_active_rules,
    process_source,
    verify_fix,
)

if TYPE_CHECKING:
    from jax_codemod.engine.cache import Cache

# Below this much source to parse, starting a process pool costs more than it saves
# (ast parses roughly 10 MB/s here; forking the workers costs ~0.1 s).
PARALLEL_MIN_BYTES = 1 * 2**20
# A chunk holds at most this many files and about 1/(jobs * CHUNKS_PER_WORKER) of the bytes.
CHUNK_SIZE = 32
CHUNKS_PER_WORKER = 8
# Temporary files of write_atomic: hidden, and not *.py, so discovery never picks one up.
TEMP_SUFFIX = ".codemod-tmp"
# A temporary this old whose writer holds no lock on it was left by a killed run: removed.
STALE_TEMP_SECONDS = 60
# A file over the parse limit is scanned for the rules' triggers in pieces this large, so even
# a sparse 8 GB *.py costs bounded memory: it is reported (trigger) or skipped (none).
SCAN_CHUNK = 2**20
# ... and only this much of its data (holes of a sparse file are skipped, they hold no trigger):
# a larger one is reported as not checked rather than scanned for a minute to decide whether to
# say so. ~0.3 s of scanning; a .py file this large is generated data.
MAX_SCAN_BYTES = 64 * 2**20
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_open_fd = os.open  # what reads a file to check (a test stands in for it to deny access)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


@dataclass
class RunResult:
    results: list[FileResult] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)

    @property
    def findings(self):
        return [finding for result in self.results for finding in result.findings]

    @property
    def changed(self) -> list[FileResult]:
        return [result for result in self.results if result.changed]


def check_file(path: str, settings: Settings, cache: Cache | None = None) -> FileResult:
    # A run of its own: the project may have changed since the last call.
    with _one_run(cache):
        source, error, identity = _read(path, settings)
        if error is not None:
            return FileResult(path=path, error=error)
        if source is None:
            return FileResult(path=path)
        return _check_source(path, source, settings, cache, identity=identity)


@contextmanager
def _one_run(cache: Cache | None):
    """What this process knows of each root is read afresh for a run (an earlier run in this
    process may predate edits): the modules' texts and the answers from them, the digests a
    cached result is checked against, the roots' states and the gate answers kept under them.
    The gate answers the run found are written when it ends (not when it is interrupted)."""
    project.forget_roots()
    if cache:
        cache.forget_gates()
    yield
    if cache:
        cache.save_gates()


# (st_dev, st_ino) of the file a result's source was read from: a fix is written only to that file.
_Identity = tuple[int, int]


def _read(path: str, settings: Settings) -> tuple[bytes | None, FileError | None, _Identity | None]:
    """(source, None, identity), (None, error, None), or (None, None, None) for a file too large
    that no rule can match.

    The size comes from ``fstat`` of the opened file, before a byte is read: a file over the
    parse limit is never read whole. One ``open`` resolves the path once; no ``stat`` before it.
    """
    try:
        # O_NONBLOCK: opening a FIFO named *.py must not wait for a writer. A FIFO or device
        # would block the run or never end: only plain files are read.
        fd = _open_fd(path, os.O_RDONLY | _NONBLOCK | _CLOEXEC)
    except OSError as error:
        return None, FileError(path, f"cannot read: {error.strerror or error}"), None
    try:
        source, error = _read_open(fd, path, settings)
        if source is None:
            return source, error, None
        info = os.fstat(fd)
        return source, error, (info.st_dev, info.st_ino)
    except OSError as error:
        return None, FileError(path, f"cannot read: {error.strerror or error}"), None
    finally:
        os.close(fd)


def _read_open(fd: int, path: str, settings: Settings) -> tuple[bytes | None, FileError | None]:
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            if stat.S_ISDIR(info.st_mode):  # what open() says of one
                return None, FileError(path, f"cannot read: {os.strerror(errno.EISDIR)}")
            return None, FileError(path, "cannot read: not a regular file")
        if info.st_size > MAX_PARSE_BYTES:
            return None, _oversized(fd, info.st_size, path, settings)
        data = _read_at_most(fd, MAX_PARSE_BYTES + 1, info.st_size)
        if len(data) > MAX_PARSE_BYTES:  # it grew since fstat
            return None, _oversized(fd, os.fstat(fd).st_size, path, settings)
        return data, None
    except OSError as error:
        return None, FileError(path, f"cannot read: {error.strerror or error}")


def _read_at_most(fd: int, limit: int, expected: int = 0) -> bytes:
    """Up to ``limit`` bytes, to the end of the file. The first read asks for one byte more than
    fstat's size (a file that grew shows it), so a file is one read and one empty read."""
    pieces, size = [], 0
    request = expected + 1
    while size < limit:
        piece = os.read(fd, min(limit - size, max(request, 2**16)))
        if not piece:
            break
        pieces.append(piece)
        size += len(piece)
        request = 4 * SCAN_CHUNK
    return pieces[0] if len(pieces) == 1 else b"".join(pieces)


def _oversized(fd: int, size: int, path: str, settings: Settings) -> FileError | None:
    """The error for a file over the parse limit that contains a rule's trigger, else None.

    Any rule's trigger counts (a superset of the prefilters), read in overlapping pieces.
    """
    too_large = FileError(path, str(SourceTooLarge(size)))
    triggers = [trigger for rule in settings.rules for trigger in rule.TRIGGERS]
    overlap = max((len(trigger) for trigger in triggers), default=1) - 1
    position, scanned, tail = 0, 0, b""
    while True:
        data = _next_data(fd, position)
        if data is None:
            return None
        if data != position:
            tail = b""  # a hole (zeros) lies between: no trigger spans it
        os.lseek(fd, data, os.SEEK_SET)
        piece = os.read(fd, SCAN_CHUNK)
        if not piece:
            return None
        position, scanned = data + len(piece), scanned + len(piece)
        window = tail + piece
        if any(trigger in window for trigger in triggers):
            return too_large
        if scanned >= MAX_SCAN_BYTES:
            return too_large
        tail = window[-overlap:] if overlap else b""


def _next_data(fd: int, position: int) -> int | None:
    """Where the next data at or after ``position`` starts, skipping holes; None at the end."""
    seek_data = getattr(os, "SEEK_DATA", None)
    if seek_data is None:
        return position
    try:
        return os.lseek(fd, position, seek_data)
    except OSError as error:
        if error.errno == errno.ENXIO:  # no data after position
            return None
        return position  # the file system cannot say: read on


def _check_source(
    path: str, source: bytes, settings: Settings, cache: Cache | None = None, active: Sequence | None = None,
    identity: _Identity | None = None,
) -> FileResult:
    if cache:
        result = cache.process(source, path, settings, active)
    else:
        result = process_source(source, path, settings, active)
    interrupts.raise_if_requested()  # a Ctrl-C swallowed during the file stops the run here
    if not result.changed:
        result.source = None  # nothing to write or diff: do not ship it between processes
    else:
        result.identity = identity
    return result


class WriteError(Exception):
    """A fixed file could not be written; the original is untouched."""


_worker_settings: Settings | None = None
_worker_cache: Cache | None = None


def _init_worker(settings: Settings, cache: Cache | None = None, named: tuple[str, ...] = ()) -> None:
    global _worker_settings, _worker_cache
    import signal

    # Ctrl-C reaches the whole process group: the parent alone answers it (one line, exit 130).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _worker_settings = settings
    _worker_cache = cache
    # Chunks are cut by size, so a worker checks the files of several roots in turn.
    project.roots_interleave()
    # The named folders decide the roots of unmarked files: a worker that was not forked
    # (spawn, forkserver) gets them here, so -j N finds what -j 1 finds.
    project.name_paths(named)


# A file for a worker: (index, path, size, crc32 of its bytes, indexes into settings.rules of the
# rules whose prefilter passed it). Read and prefiltered by the parent, or (crc and indexes
# None) not yet read: the worker reads and prefilters it; size is then fstat's, for ordering.
_Pending = tuple[int, str, int, "int | None", "tuple[int, ...] | None"]


def _check_chunk(chunk: Sequence[_Pending]) -> tuple[list[FileResult], list]:
    """The chunk's results, and the project gate's answers found on the way (``Cache.new_gates``),
    for the parent to write."""
    results = [_check_pending(item, _worker_settings, _worker_cache) for item in chunk]
    return results, _worker_cache.new_gates() if _worker_cache else []


def _check_pending(item: _Pending, settings: Settings, cache: Cache | None = None) -> FileResult:
    """Check a file for the pool, read here. A file the parent prefiltered keeps the parent's
    answer while the bytes are the ones it read (size and CRC); one changed since, or one the
    parent never read, is prefiltered here."""
    _index, path, size, crc, indexes = item
    source, error, identity = _read(path, settings)
    if error is not None:
        return FileResult(path=path, error=error)
    if source is None:
        return FileResult(path=path)
    if indexes is not None and len(source) == size and zlib.crc32(source) == crc:
        active = tuple(settings.rules[i] for i in indexes)
    else:
        active = file_active_rules(path, source, settings.rules, cache.gate if cache else None, settings)
        if not active:
            return FileResult(path=path)
    return _check_source(path, source, settings, cache, active, identity)


def check_files(
    paths: Sequence[str],
    settings: Settings,
    jobs: int | None = None,
    on_result: Callable[[FileResult], None] | None = None,
    cache: Cache | None = None,
) -> list[FileResult]:
    """Check ``paths`` (in parallel when worth it); results in the order of ``paths``.

    With one job each file is read, prefiltered and, when a rule's prefilter passes it,
    checked at once from the bytes read. With more, files are read and prefiltered here
    until PARALLEL_MIN_BYTES of them pass: in a small tree (or one of many tiny files, most
    of which hold no rule's trigger) that point is never reached, and the run stays in this
    process, checking the bytes it holds (starting a pool costs more than it saves). Once it
    is reached the pool starts at once, and the files not yet read go to the workers
    unread: each worker reads, prefilters and checks its share, so nothing is read twice
    and this process's serial part of the run is only the files read so far. The files
    already read go as their paths, sizes, CRCs and prefilter answers; workers read every
    file themselves (from the page cache) rather than receive its bytes, so memory stays
    bounded on a large tree. ``cache`` (a result cache) is consulted only for files that
    pass the prefilter; it also keeps the project gate's answers, one entry per root, which
    this process writes at the end (a pool's workers hand theirs over with their results).
    """
    # More workers than CPUs only cost memory (each holds a parser and its trees).
    jobs = min(jobs or available_cpus(), available_cpus())
    with _one_run(cache):
        return _check_files(paths, settings, jobs, on_result, cache)


def _check_files(paths, settings: Settings, jobs: int, on_result, cache: Cache | None) -> list[FileResult]:
    results: list[FileResult | None] = [None] * len(paths)
    rules = tuple(settings.rules)
    position = {id(rule): number for number, rule in enumerate(rules)}

    def done(index: int, result: FileResult) -> None:
        results[index] = result
        if on_result:
            on_result(result)

    pending: list[_Pending] = []
    held: list[tuple[bytes, tuple, _Identity | None]] = []  # the bytes, answers and files of ``pending``
    pending_bytes = 0
    for index, path in enumerate(paths):
        source, error, identity = _read(path, settings)
        if error is not None:
            done(index, FileResult(path=path, error=error))
            continue
        active = file_active_rules(path, source, rules, cache.gate if cache else None, settings) if source is not None else ()
        if not active:
            done(index, FileResult(path=path))
        elif jobs == 1:
            done(index, _check_source(path, source, settings, cache, active, identity))
        else:
            pending.append((index, path, len(source), zlib.crc32(source), tuple(position[id(r)] for r in active)))
            held.append((source, active, identity))
            pending_bytes += len(source)
            if pending_bytes >= PARALLEL_MIN_BYTES and len(pending) >= 2:
                # A pool run: its workers read every file themselves.
                del held
                unread = [(later, paths[later], _size_hint(paths[later]), None, None)
                          for later in range(index + 1, len(paths))]
                _check_in_pool(pending + unread, settings, jobs, done, cache)
                return results
    for (index, path, *_), (source, active, identity) in zip(pending, held, strict=True):
        done(index, _check_source(path, source, settings, cache, active, identity))
    return results


def _size_hint(path: str) -> int:
    """The size of a file not yet read, to order the pool's work by (the worker reads it)."""
    try:
        return min(os.stat(path).st_size, MAX_PARSE_BYTES)
    except OSError:
        return 0  # the worker reports why it cannot be read


def _check_in_pool(pending, settings: Settings, jobs: int, done, cache: Cache | None = None) -> None:
    # Imported here: multiprocessing costs ~25 ms of startup that most runs never need.
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    chunks = _chunks(pending, jobs)
    jobs = max(1, min(jobs, len(chunks)))  # a worker without a chunk is only start-up cost
    _load_rules(settings.rules)
    if any(getattr(rule, "PROJECT_PREFILTER", False) for rule in settings.rules):
        # The project gate's roots, found and listed once for every worker (they fork from here).
        project.prepare(path for _, path, *_ in pending)
    pool = ProcessPoolExecutor(max_workers=jobs, initializer=_init_worker, initargs=(settings, cache, project.named()))
    try:
        futures = [pool.submit(_check_chunk, chunk) for chunk in chunks]
        for chunk, future in zip(chunks, futures):
            try:
                chunk_results, gates = future.result()
                if cache:
                    cache.add_gates(gates)
            except BrokenProcessPool:
                # A worker died (out of memory, a crash in a native parser): the pool is
                # broken, so this and every later chunk is reported unchecked rather than
                # taking the whole run down.
                chunk_results = [
                    FileResult(path=path, error=FileError(path, "not checked: a worker process died (out of memory or a crash)"))
                    for _, path, *_ in chunk
                ]
            for (index, *_), result in zip(chunk, chunk_results):
                done(index, result)
    except BaseException:
        # Interrupted (Ctrl-C): drop the queued chunks and stop the workers now, rather than
        # wait for every chunk they hold. They write nothing, so nothing is left half done.
        processes = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.terminate()
        raise
    pool.shutdown(wait=True)


def _load_rules(rules: Sequence) -> None:
    """Import every rule (and the analyses it imports) here, before the workers fork.

    A ``LazyRule`` imports its rule when a file first needs it: in a pool, every worker would
    import it again (~0.06 s of CPU each for the six rules). Imported once here, the workers
    inherit the modules. A tree large enough for a pool needs nearly all of them anyway.
    """
    for rule in rules:
        try:
            getattr(rule, "rule", None)
        except Exception:  # noqa: BLE001, S110 -- a rule that cannot load fails where it is used, as before
            pass


def available_cpus() -> int:
    """CPUs this process may run on (its affinity mask, e.g. a CI container's share)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _chunks(pending: Sequence[_Pending], jobs: int) -> list[list[_Pending]]:
    """Largest files first, cut by bytes so that no chunk holds much more than its share.

    Files differ in cost by 1000x and the pool hands chunks out in order, so this is
    longest-processing-time-first scheduling: the big files start early, each alone in its
    chunk, and the many small ones fill in behind them. Cutting by count instead (32 files
    a chunk, largest first) put a third of the work of jax+flax+optax+... into the first
    chunk at 2 workers and ran 19% over the ideal wall time at 8 (this: 4%); on a 2,300-file
    tree, 70% over at 4.
    """
    ordered = sorted(pending, key=lambda item: -item[2])
    budget = sum(item[2] for item in ordered) / (jobs * CHUNKS_PER_WORKER)
    chunks: list[list[_Pending]] = []
    current: list[_Pending] = []
    current_bytes = 0
    for item in ordered:
        current.append(item)
        current_bytes += item[2]
        if current_bytes >= budget or len(current) >= CHUNK_SIZE:
            chunks.append(current)
            current, current_bytes = [], 0
    if current:
        chunks.append(current)
    return chunks


def write_atomic(path: str, expected: bytes, new: bytes, identity: _Identity | None = None) -> None:
    """Replace ``path``'s content with ``new`` if it still holds ``expected``.

    The new content goes to a temporary file beside the target, which then replaces it in one
    rename: a run killed at any moment leaves the old file or the new one. Nothing is resolved
    twice: the folder is opened once, and the file, the temporary and the rename are all taken
    relative to that open folder, the file without following a link. With ``identity`` (the
    device and inode the fix was read from) any other file there is refused: a name swapped for a
    link (or a folder on its way swapped) since the read is never written through.
    """
    gaps = posix.missing()
    if gaps:  # (Windows) no write without dir_fd and O_NOFOLLOW: the file's error, never a traceback
        raise WriteError(f"not written: {posix.message(gaps)}")
    target = os.path.realpath(path)
    directory, name = os.path.split(target)
    try:
        folder = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC)
    except OSError as error:
        raise WriteError(f"not written: cannot open its folder: {error.strerror}") from error
    try:
        _write_in(folder, directory, name, expected, new, identity)
    finally:
        os.close(folder)


def _write_in(folder: int, directory: str, name: str, expected: bytes, new: bytes, identity) -> None:
    try:
        fd = os.open(name, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC, dir_fd=folder)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise WriteError("not written: the file became a symbolic link since it was read") from error
        raise WriteError(f"not written: cannot re-read: {error.strerror}") from error
    try:
        _replace(folder, directory, name, fd, expected, new, identity)
    finally:
        os.close(fd)


def _replace(folder: int, directory: str, name: str, fd: int, expected: bytes, new: bytes, identity) -> None:
    try:
        before = os.fstat(fd)
        if not stat.S_ISREG(before.st_mode):
            raise WriteError("not written: no longer a regular file")
        if identity is not None and (before.st_dev, before.st_ino) != tuple(identity):
            raise WriteError("not written: the path names another file than the one that was read")
        if not _folder_is(folder, directory):
            raise WriteError("not written: a folder on its way changed since it was read")
        current = _read_at_most(fd, len(expected) + 1, before.st_size)
    except OSError as error:
        raise WriteError(f"not written: cannot re-read: {error.strerror}") from error
    if current != expected:
        raise WriteError("not written: the file changed on disk while the run was in progress")
    if before.st_nlink > 1:
        # A rename gives the path a new inode: the other names would keep the old content.
        raise WriteError(
            f"not written: the file has {before.st_nlink} hard links, which replacing it would split; "
            "fix it by hand or break the links first"
        )
    # Mode bits too: root may write anything, but a file marked read-only stays as it is.
    if not os.access(name, os.W_OK, dir_fd=folder) or not before.st_mode & 0o222:
        raise WriteError("not written: the file is read-only")
    temporary = _create_temporary(folder, name)
    try:
        out = os.open(temporary, os.O_WRONLY | _NOFOLLOW | _CLOEXEC, dir_fd=folder)
        with os.fdopen(out, "wb") as handle:
            _lock(handle.fileno())  # tells a later run's clean-up that this one is alive
            handle.write(new)
            handle.flush()
            os.fsync(handle.fileno())
            os.fchmod(handle.fileno(), stat.S_IMODE(before.st_mode))
            _keep_owner(handle.fileno(), before)
            _keep_xattrs(fd, handle.fileno())
        # Last look before the rename: an editor that saved (or deleted) the file since it
        # was compared above must win. The window left is the rename itself, which replaces
        # the name in this folder and never follows it.
        if not _same_file_state(folder, name, before):
            raise WriteError("not written: the file changed on disk while the run was in progress")
        os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException as error:  # including KeyboardInterrupt: never leave the temporary behind
        try:
            os.unlink(temporary, dir_fd=folder)
        except OSError:
            pass
        if isinstance(error, OSError):
            raise WriteError(f"not written: {error.strerror or error}") from error
        raise


def _folder_is(folder: int, directory: str) -> bool:
    """Whether the open ``folder`` is still the folder at ``directory`` (no component swapped)."""
    try:
        opened, named = os.fstat(folder), os.stat(directory)
    except OSError:
        return False
    return (opened.st_dev, opened.st_ino) == (named.st_dev, named.st_ino)


def _create_temporary(folder: int, name: str) -> str:
    """A new temporary in ``folder``, created exclusively (never a file that exists, never a link)."""
    for _ in range(100):
        temporary = _temporary_name(name)
        try:
            os.close(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o600,
                             dir_fd=folder))
            return temporary
        except FileExistsError:
            continue
        except OSError as error:
            raise WriteError(f"not written: cannot create a temporary file: {error.strerror}") from error
    raise WriteError("not written: cannot create a temporary file")


def _temporary_name(name: str) -> str:
    """``.NAME.<token><tag>.codemod-tmp``: a random token, and a tag that is the token's HMAC under
    the user's secret key (the cache's). Only a name with a valid tag is ever cleaned up, so no
    file of the tree (a committed ``.notes.codemod-tmp``) can be taken for a temporary of ours."""
    import secrets

    token = secrets.token_hex(8)
    return f".{name[:64]}.{token}{_temporary_tag(token) or secrets.token_hex(8)}{TEMP_SUFFIX}"


def _temporary_tag(token: str) -> str | None:
    import hashlib
    import hmac

    from jax_codemod.engine.cache import secret_key

    key = secret_key()
    if key is None:
        return None
    return hmac.new(key, b"codemod-temporary\0" + token.encode(), hashlib.sha256).hexdigest()[:16]


def _is_our_temporary(name: str) -> bool:
    import hmac

    if not (name.startswith(".") and name.endswith(TEMP_SUFFIX)):
        return False
    body = name[: -len(TEMP_SUFFIX)]
    stamp = body[-32:]
    if len(body) < 34 or body[-33] != "." or not all(c in "0123456789abcdef" for c in stamp):
        return False
    tag = _temporary_tag(stamp[:16])
    return tag is not None and hmac.compare_digest(tag, stamp[16:])


def _keep_owner(fd: int, before: os.stat_result) -> None:
    """Give the new file the old one's owner and group (a root CI bot must not take files over)."""
    created = os.fstat(fd)
    if (created.st_uid, created.st_gid) == (before.st_uid, before.st_gid):
        return
    try:
        os.fchown(fd, before.st_uid, before.st_gid)
    except OSError as error:
        raise WriteError(f"not written: cannot keep the file's owner and group: {error.strerror}") from error


def _keep_xattrs(target: int, temporary: int) -> None:
    """Copy the extended attributes (ACLs, SELinux labels, user.*) to the new file, or refuse."""
    try:
        names = os.listxattr(target)
    except (AttributeError, OSError):  # no xattr support here: there are none to lose
        return
    for attribute in names:
        try:
            value = os.getxattr(target, attribute)
            try:
                if os.getxattr(temporary, attribute) == value:
                    continue  # e.g. the SELinux label the directory already gives new files
            except OSError:
                pass
            os.setxattr(temporary, attribute, value)
        except OSError as error:
            raise WriteError(
                f"not written: cannot keep its extended attribute {attribute!r}: {error.strerror or error}"
            ) from error


def _lock(fd: int) -> None:
    try:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except (ImportError, OSError):
        pass


def clean_stale_temporaries(directory: str) -> list[str]:
    """Remove the temporaries of runs killed mid-write (SIGKILL, power loss) in ``directory``.

    One is stale when it is old and no live writer holds its lock (a lock dies with its
    process). Only regular files whose name carries a tag made with this user's secret key
    (``_temporary_name``) are touched, never a link: a file of the tree cannot be named so.
    """
    removed: list[str] = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    now = time.time()
    for entry in entries:
        if not _is_our_temporary(entry.name):
            continue
        try:
            info = entry.stat(follow_symlinks=False)
            if not stat.S_ISREG(info.st_mode) or now - info.st_mtime < STALE_TEMP_SECONDS:
                continue
            fd = os.open(entry.path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC)
            try:
                import fcntl

                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                if os.fstat(fd).st_ino == os.stat(entry.path, follow_symlinks=False).st_ino:
                    os.unlink(entry.path)
                    removed.append(entry.path)
            finally:
                os.close(fd)
        except (ImportError, OSError):
            continue
    return removed


def _same_file_state(folder: int, name: str, before: os.stat_result) -> bool:
    try:
        now = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except OSError:
        return False
    return (now.st_ino, now.st_dev, now.st_size, now.st_mtime_ns) == (
        before.st_ino,
        before.st_dev,
        before.st_size,
        before.st_mtime_ns,
    )


def write_results(results: Iterable[FileResult]) -> list[FileError]:
    """Write every changed result; a file that cannot be written is reported, not fatal.

    Only a result that fixes some finding is written, and one answered from the cache is
    validated first exactly as a fresh fix was (``verify_fix``).
    """
    errors: list[FileError] = []
    cleaned: set[str] = set()
    for result in results:
        if not result.changed:
            continue
        try:
            if not any(finding.applied for finding in result.findings):
                raise WriteError("not written: no finding of it was fixed")
            if result.verify_with is not None:
                problem = verify_fix(result, result.verify_with)
                if problem is not None:
                    raise WriteError(f"not written: the cached fix failed validation ({problem}); "
                                     "run again with --no-cache")
            directory = os.path.dirname(os.path.realpath(result.path))
            if directory not in cleaned:
                cleaned.add(directory)
                clean_stale_temporaries(directory)
            write_atomic(result.path, result.source, result.fixed, result.identity)
        except WriteError as error:
            failure = FileError(result.path, str(error))
            errors.append(failure)
            result.error = failure
            result.findings = [replace(f, applied=False, resolved_by=None) for f in result.findings]
    return errors


def write_report(path: str, text: str, trees: Sequence[str] = ()) -> None:
    """Write the ``--report`` file: never through a symbolic link, never half-written.

    The report goes to a new file beside ``path`` that is renamed over it, both relative to the
    folder opened once: a rename replaces a name, it never follows one, so a link planted at
    ``path`` in the checkout is refused, and one planted after that check is replaced, not
    written through. A folder on the way that is a link inside one of ``trees`` (the analysed
    roots, the working directory) is refused too: the tree could have planted it.
    """
    try:
        if stat.S_ISLNK(os.lstat(path).st_mode):
            raise WriteError("refusing to write the report through a symbolic link")
    except FileNotFoundError:
        pass
    except OSError as error:
        raise WriteError(error.strerror or str(error)) from error
    linked = linked_folder(path, trees)
    if linked is not None:
        raise WriteError(f"refusing to write the report through {linked}, a symbolic link inside the tree")
    directory, name = os.path.split(os.path.abspath(path))
    try:
        folder = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC)
    except OSError as error:
        raise WriteError(error.strerror or str(error)) from error
    try:
        temporary = _create_temporary(folder, "codemod-report")
        try:
            umask = os.umask(0o022)
            os.umask(umask)
            out = os.open(temporary, os.O_WRONLY | _NOFOLLOW | _CLOEXEC, dir_fd=folder)
            with os.fdopen(out, "w", encoding="utf-8") as handle:
                handle.write(text)
                os.fchmod(handle.fileno(), 0o666 & ~umask)
            os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException as error:
            try:
                os.unlink(temporary, dir_fd=folder)
            except OSError:
                pass
            if isinstance(error, OSError):
                raise WriteError(error.strerror or str(error)) from error
            raise
    except WriteError as error:
        raise WriteError(str(error).removeprefix("not written: ")) from error
    finally:
        os.close(folder)
