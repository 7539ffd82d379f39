"""What checking one file gives: its result, its errors, and the patch of its fix.

Apart from the pipeline so that what reads or renders results (the notebook writer, the
cache, the CLI) needs nothing of the pipeline itself.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from jax_codemod.rule import Finding

if TYPE_CHECKING:
    from jax_codemod.engine.pipeline import Settings


@dataclass(frozen=True)
class FileError:
    path: str
    message: str
    line: int | None = None
    # Where a syntax error is: 1-based column, and the offending source line (without its ending).
    column: int | None = None
    source_line: str | None = None
    # In a notebook: the cell ``line`` is in (1-based, counting every cell).
    cell: int | None = None

    def to_json(self) -> dict:
        document = {"path": self.path, "line": self.line, "message": self.message, "column": self.column}
        if self.cell is not None:
            document["cell"] = self.cell
        return document

    def __str__(self) -> str:
        where = f"{self.path}:cell {self.cell}" if self.cell else self.path
        where = f"{where}:{self.line}" if self.line else where
        return f"{where}: {self.message}"


@dataclass
class FileResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    source: bytes | None = None
    fixed: bytes | None = None
    error: FileError | None = None
    # Set on a result answered from the cache that carries a fix: ``fixed`` is validated
    # under these settings (``verify_fix``) before it is ever written.
    verify_with: Settings | None = field(default=None, compare=False, repr=False)
    # (st_dev, st_ino) of the file ``source`` was read from, when read from one: the fix is written
    # to that file or not at all (a name swapped for a link since is refused, not followed).
    identity: tuple[int, int] | None = field(default=None, compare=False, repr=False)
    # The other modules of the project the analysis read for this file, each with the digest of
    # the bytes it read (paths relative to the file's project root): the cache reuses the result
    # only while every one is unchanged.
    depends: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    @property
    def changed(self) -> bool:
        return self.fixed is not None and self.fixed != self.source

    def diff(self, display_path: str | None = None) -> str:
        if not self.changed:
            return ""
        name = display_path or self.path
        return unified_diff(self.source, self.fixed, name)


def unified_diff(before: bytes, after: bytes, name: str) -> str:
    """A unified diff that ``git apply`` and ``patch -p1`` accept, exact to the byte.

    Lines end at LF only, as in git (a CR or form feed is part of its line), and bytes that
    are not UTF-8 (a latin-1 file) come back as surrogate escapes: encoding the diff with
    ``errors="surrogateescape"`` gives the patch's exact bytes.
    """
    name = name.lstrip("/")  # absolute paths become root-relative, as `patch -p1` expects
    lines = list(difflib.diff_bytes(difflib.unified_diff, _lf_lines(before), _lf_lines(after)))
    if not lines:
        return ""
    # difflib's own header lines (the first two) are replaced by git's.
    out: list[bytes] = [diff_header(b"---", f"a/{name}"), diff_header(b"+++", f"b/{name}")]
    for line in lines[2:]:
        out.append(line)
        if not line.endswith(b"\n"):
            out.append(b"\n\\ No newline at end of file\n")
    return b"".join(out).decode("utf-8", "surrogateescape")


def diff_header(marker: bytes, name: str) -> bytes:
    """A ``---``/``+++`` line as git writes it: the name quoted as git quotes it, and a TAB after
    a name with a space, without which GNU patch reads ``conf .py`` as ``conf``."""
    label = quote_path(name)
    return marker + b" " + label + (b"\t" if b" " in label else b"") + b"\n"


_C_ESCAPES = {
    "\a": "\\a", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\v": "\\v", "\f": "\\f", "\r": "\\r",
    '"': '\\"', "\\": "\\\\",
}
# What git quotes in a path with its default core.quotePath=true: everything but printable
# ASCII (controls, DEL, every non-ASCII byte, so a bidi or zero-width character in a name is
# seen as its octal bytes), and the quote and backslash. And one thing git would print raw:
# the `#` of `##[`, which GitHub's runner reads as a legacy command anywhere in a log line.
_NEEDS_QUOTING = re.compile('[^\x20-\x7e]|["\\\\]|#(?=#\\[)')


def quote_path(name: str) -> bytes:
    """A file name for a diff header, quoted the way git quotes it (``git diff``'s default).

    A name with anything but printable ASCII, or with a quote or a backslash, is written in
    double quotes with C escapes and every other byte in octal (``"a/x\\n--- a/other.py"``,
    ``"a/caf\\303\\251.py"``), which ``git apply`` and GNU ``patch`` unquote: a newline in a
    directory name can never start a header of its own and retarget a hunk to another file,
    and a right-to-left override cannot make the header read as another name.
    """
    if not _NEEDS_QUOTING.search(name):
        return name.encode("ascii")
    return b'"' + _NEEDS_QUOTING.sub(_quote_char, name).encode("ascii") + b'"'


def _quote_char(match: re.Match) -> str:
    char = match.group()
    if char in _C_ESCAPES:
        return _C_ESCAPES[char]
    # A surrogate escape is the name's own undecodable byte; anything else, its UTF-8 bytes.
    raw = char.encode("utf-8", "surrogateescape")
    return "".join(f"\\{byte:03o}" for byte in raw)


def _lf_lines(data: bytes) -> list[bytes]:
    return _LF_LINE.findall(data)


_LF_LINE = re.compile(rb"[^\n]*\n|[^\n]+\Z")
