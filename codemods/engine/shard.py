"""``--shard I/N``: a deterministic partition of the file list across CI runners.

A file's shard depends only on its path relative to the root it was found under, hashed
with SHA-256 (Python's ``hash()`` is salted per process), so every runner of a CI matrix
computes the same partition without talking to the others, whatever the checkout directory,
and a file's shard does not move when other files are added or removed.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass

_SPEC = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


@dataclass(frozen=True)
class Shard:
    index: int  # 1-based, as CI matrices count
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        match = _SPEC.match(text)
        if not match:
            raise ValueError(f"expected I/N (e.g. 1/4), got {text!r}")
        index, count = int(match.group(1)), int(match.group(2))
        if count < 1 or not 1 <= index <= count:
            raise ValueError(f"shard {index}/{count}: need 1 <= I <= N")
        return cls(index, count)

    def owns(self, key: str) -> bool:
        digest = hashlib.sha256(key.encode("utf-8", "surrogateescape")).digest()
        return int.from_bytes(digest[:8], "big") % self.count == self.index - 1

    def select(self, files: Iterable[str], root: str) -> list[str]:
        return [path for path in files if self.owns(shard_key(path, root))]

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def shard_key(path: str, root: str) -> str:
    """``path`` relative to ``root`` (its directory, when ``root`` is a file), with ``/``."""
    base = root if os.path.isdir(root) else os.path.dirname(root) or "."
    relative = os.path.relpath(os.path.abspath(path), os.path.abspath(base))
    return relative.replace(os.sep, "/")
