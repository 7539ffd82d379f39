"""The POSIX calls codemod's writes rest on, and a clear stop where this Python lacks them.

Every write (a fix, ``--add-noqa``, ``--report``, the cache, a temporary) is made relative to a
folder held open (``dir_fd``), and a file is opened without following a link (``O_NOFOLLOW``):
that is what keeps a name swapped for a link between the read and the write from being written
through (docs/security.md). Linux and macOS have both. Windows' Python has neither, and there
each write would fail with ``NotImplementedError`` after the files were checked; nothing may be
written in a weaker way instead. So a run that could write stops before it starts, with one line
that says why (``require``), and the engine's own write refuses the same way.
"""

from __future__ import annotations

import os
import sys

# The calls the engine makes with dir_fd (os.replace goes through rename's renameat).
NEEDED = ("open", "stat", "unlink", "mkdir", "rename", "access")


class Unsupported(Exception):
    """This Python's ``os`` lacks what codemod's writes need."""


def missing() -> list[str]:
    """What this Python's ``os`` lacks of what the writes need (empty on Linux and macOS)."""
    gaps = [f"{name}(dir_fd=...)" for name in NEEDED if getattr(os, name, None) not in os.supports_dir_fd]
    if not hasattr(os, "O_NOFOLLOW"):
        gaps.append("O_NOFOLLOW")
    return gaps


def message(gaps: list[str]) -> str:
    return (f"codemod writes only on POSIX systems (Linux, macOS): this Python ({sys.platform}) lacks "
            f"os.{', os.'.join(gaps)}, which every write goes through; on Windows run codemod under WSL "
            "(`codemod run -`, stdin to stdout, writes nothing and works everywhere)")


def require() -> None:
    gaps = missing()
    if gaps:
        raise Unsupported(message(gaps))
