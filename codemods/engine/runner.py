"""Running the engine over many files: parallel checking and safe, atomic writes."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from jax_codemod.engine.pipeline import FileError, FileResult, Settings, process_source

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
    source, error = _read(path)
    if error is not None:
        return FileResult(path=path, error=error)
    return _check_source(path, source, settings, cache)


def _read(path: str) -> tuple[bytes | None, FileError | None]:
    try:
        # A FIFO or device named *.py would block the run or never end: only plain files are read.
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None, FileError(path, "cannot read: not a regular file")
        with open(path, "rb") as handle:
            return handle.read(), None
    except OSError as error:
        return None, FileError(path, f"cannot read: {error.strerror or error}")


def _check_source(path: str, source: bytes, settings: Settings, cache: Cache | None = None) -> FileResult:
    result = cache.process(source, path, settings) if cache else process_source(source, path, settings)
    if not result.changed:
        result.source = None  # nothing to write or diff: do not ship it between processes
    return result


class WriteError(Exception):
    """A fixed file could not be written; the original is untouched."""


_worker_settings: Settings | None = None
_worker_cache: Cache | None = None


def _init_worker(settings: Settings, cache: Cache | None = None) -> None:
    global _worker_settings, _worker_cache
    _worker_settings = settings
    _worker_cache = cache


def _check_chunk(paths: Sequence[str]) -> list[FileResult]:
    return [check_file(path, _worker_settings, _worker_cache) for path in paths]


def check_files(
    paths: Sequence[str],
    settings: Settings,
    jobs: int | None = None,
    on_result: Callable[[FileResult], None] | None = None,
    cache: Cache | None = None,
) -> list[FileResult]:
    """Check ``paths`` (in parallel when worth it); results in the order of ``paths``.

    Files are read and prefiltered here: in a typical tree almost none contains a rule's
    trigger, and reading one is cheaper than handing it to another process. Only the
    files that reach the parser go to a process pool, and only when they are big enough
    together to pay for starting it. Workers read those files again (from the page
    cache) rather than receive them, so memory stays bounded on a large tree. ``cache``
    (a result cache) is consulted only for files that pass the prefilter.
    """
    jobs = jobs or os.cpu_count() or 1
    results: list[FileResult | None] = [None] * len(paths)

    def done(index: int, result: FileResult) -> None:
        results[index] = result
        if on_result:
            on_result(result)

    pending: list[tuple[int, str, int]] = []
    pending_bytes = 0
    for index, path in enumerate(paths):
        source, error = _read(path)
        if error is not None:
            done(index, FileResult(path=path, error=error))
        elif not any(rule.prefilter(source) for rule in settings.rules):
            done(index, FileResult(path=path))
        else:
            pending.append((index, path, len(source)))
            pending_bytes += len(source)
    if jobs == 1 or len(pending) < 2 or pending_bytes < PARALLEL_MIN_BYTES:
        for index, path, _ in pending:
            done(index, check_file(path, settings, cache))
    else:
        _check_in_pool(pending, settings, jobs, done, cache)
    return results


def _check_in_pool(pending, settings: Settings, jobs: int, done, cache: Cache | None = None) -> None:
    # Imported here: multiprocessing costs ~25 ms of startup that most runs never need.
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    chunks = _chunks(pending, jobs)
    with ProcessPoolExecutor(max_workers=jobs, initializer=_init_worker, initargs=(settings, cache)) as pool:
        futures = [pool.submit(_check_chunk, [path for _, path, _ in chunk]) for chunk in chunks]
        for chunk, future in zip(chunks, futures):
            try:
                chunk_results = future.result()
            except BrokenProcessPool:
                # A worker died (out of memory, a crash in a native parser): the pool is
                # broken, so this and every later chunk is reported unchecked rather than
                # taking the whole run down.
                chunk_results = [
                    FileResult(path=path, error=FileError(path, "not checked: a worker process died (out of memory or a crash)"))
                    for _, path, _ in chunk
                ]
            for (index, _, _), result in zip(chunk, chunk_results):
                done(index, result)


def _chunks(pending: Sequence[tuple[int, str, int]], jobs: int) -> list[list[tuple[int, str, int]]]:
    """Largest files first, cut by bytes so that no chunk holds much more than its share.

    Files differ in cost by 1000x and the pool hands chunks out in order, so this is
    longest-processing-time-first scheduling: the big files start early, each alone in its
    chunk, and the many small ones fill in behind them. Cutting by count instead (32 files
    a chunk, largest first) put a third of the work of jax+flax+optax+... into the first
    chunk at 2 workers and ran 19% over the ideal wall time at 8 (this: 4%); on a 2,300-file
    tree, 70% over at 4.
    """
    ordered = sorted(pending, key=lambda item: -item[2])
    budget = sum(size for _, _, size in ordered) / (jobs * CHUNKS_PER_WORKER)
    chunks: list[list[tuple[int, str, int]]] = []
    current: list[tuple[int, str, int]] = []
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


def write_atomic(path: str, expected: bytes, new: bytes) -> None:
    """Replace ``path``'s content with ``new`` if it still holds ``expected``.

    The new content goes to a temporary file beside the target, which then replaces it
    in one rename: a run killed at any moment leaves the old file or the new one.
    """
    target = os.path.realpath(path)
    try:
        with open(target, "rb") as handle:
            before = os.fstat(handle.fileno())
            current = handle.read()
    except OSError as error:
        raise WriteError(f"not written: cannot re-read: {error.strerror}") from error
    if current != expected:
        raise WriteError("not written: the file changed on disk while the run was in progress")
    # Mode bits too: root may write anything, but a file marked read-only stays as it is.
    if not os.access(target, os.W_OK) or not before.st_mode & 0o222:
        raise WriteError("not written: the file is read-only")
    import tempfile  # ~15 ms to import; only runs that write need it

    directory, name = os.path.split(target)
    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=TEMP_SUFFIX, dir=directory)
    except OSError as error:
        raise WriteError(f"not written: cannot create a temporary file: {error.strerror}") from error
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(new)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, stat.S_IMODE(before.st_mode))
        _keep_owner(temporary, before)
        # Last look before the rename: an editor that saved (or deleted) the file since it
        # was compared above must win. The window left is the rename itself.
        if not _same_file_state(target, before):
            raise WriteError("not written: the file changed on disk while the run was in progress")
        os.replace(temporary, target)
    except BaseException as error:  # including KeyboardInterrupt: never leave the temporary behind
        try:
            os.unlink(temporary)
        except OSError:
            pass
        if isinstance(error, OSError):
            raise WriteError(f"not written: {error.strerror or error}") from error
        raise


def _keep_owner(temporary: str, before: os.stat_result) -> None:
    """Give the new file the old one's owner and group (a root CI bot must not take files over)."""
    created = os.stat(temporary)
    if (created.st_uid, created.st_gid) == (before.st_uid, before.st_gid):
        return
    try:
        os.chown(temporary, before.st_uid, before.st_gid)
    except OSError as error:
        raise WriteError(f"not written: cannot keep the file's owner and group: {error.strerror}") from error


def _same_file_state(path: str, before: os.stat_result) -> bool:
    try:
        now = os.stat(path)
    except OSError:
        return False
    return (now.st_ino, now.st_dev, now.st_size, now.st_mtime_ns) == (
        before.st_ino,
        before.st_dev,
        before.st_size,
        before.st_mtime_ns,
    )


def write_results(results: Iterable[FileResult]) -> list[FileError]:
    """Write every changed result; a file that cannot be written is reported, not fatal."""
    errors: list[FileError] = []
    for result in results:
        if not result.changed:
            continue
        try:
            write_atomic(result.path, result.source, result.fixed)
        except WriteError as error:
            failure = FileError(result.path, str(error))
            errors.append(failure)
            result.error = failure
            result.findings = [replace(f, applied=False) for f in result.findings]
    return errors
