"""Running the engine over many files: parallel checking and safe, atomic writes."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from codemods.engine import FileError, FileResult, Settings, process_source

if TYPE_CHECKING:
    from codemods.cache import Cache

# Below this many files a process pool costs more than it saves.
PARALLEL_THRESHOLD = 48
CHUNK_SIZE = 32


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
    try:
        with open(path, "rb") as handle:
            source = handle.read()
    except OSError as error:
        return FileResult(path=path, error=FileError(path, f"cannot read: {error.strerror or error}"))
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
    """Check ``paths`` (in parallel when worth it); results in the order of ``paths``."""
    jobs = jobs or os.cpu_count() or 1
    results: list[FileResult] = []
    if jobs == 1 or len(paths) < PARALLEL_THRESHOLD:
        for path in paths:
            result = check_file(path, settings, cache)
            results.append(result)
            if on_result:
                on_result(result)
        return results
    chunks = [paths[i : i + CHUNK_SIZE] for i in range(0, len(paths), CHUNK_SIZE)]
    with ProcessPoolExecutor(max_workers=jobs, initializer=_init_worker, initargs=(settings, cache)) as pool:
        for chunk_results in pool.map(_check_chunk, chunks):
            for result in chunk_results:
                results.append(result)
                if on_result:
                    on_result(result)
    return results


def write_atomic(path: str, expected: bytes, new: bytes) -> None:
    """Replace ``path``'s content with ``new`` if it still holds ``expected``.

    The new content goes to a temporary file beside the target, which then replaces it
    in one rename: a run killed at any moment leaves the old file or the new one.
    """
    target = os.path.realpath(path)
    try:
        with open(target, "rb") as handle:
            current = handle.read()
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except OSError as error:
        raise WriteError(f"not written: cannot re-read: {error.strerror}") from error
    if current != expected:
        raise WriteError("not written: the file changed on disk while the run was in progress")
    if not os.access(target, os.W_OK):
        raise WriteError("not written: the file is read-only")
    directory, name = os.path.split(target)
    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=".codemod-tmp", dir=directory)
    except OSError as error:
        raise WriteError(f"not written: cannot create a temporary file: {error.strerror}") from error
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(new)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except OSError as error:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise WriteError(f"not written: {error.strerror or error}") from error


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
