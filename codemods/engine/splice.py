"""A fix changes only the bytes of its own edits.

libcst prints a module almost as it read it, not quite: it drops a form feed at the start of a
line, and it re-encodes a file in its declared encoding (a ``utf-7`` line can come back as
other bytes for the same text). Neither is the fix's doing, and a bot's commit must not carry
them. So the printout of the unchanged parse (the ``baseline``) is compared with the fixed
printout line by line: lines they share are taken from the original file, byte for byte, and
only the lines the fix changed come from the fixed printout.
"""

from __future__ import annotations

import difflib
import re

# The tokenizer's line ends (as for Python itself: a form feed or U+2028 ends no line).
_LINE = re.compile(rb"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def lines(data: bytes) -> list[bytes]:
    return _LINE.findall(data)


def only_own_edits(source: bytes, baseline: bytes | None, fixed: bytes) -> bytes:
    """``fixed`` with every line the fix did not change restored to ``source``'s bytes.

    ``baseline`` is libcst's printout of ``source`` unchanged; where it does not line up with
    ``source`` line for line (it always does: libcst keeps every line), ``fixed`` is returned.
    """
    if baseline is None or baseline == source:
        return fixed
    original, base, new = lines(source), lines(baseline), lines(fixed)
    if len(original) != len(base):
        return fixed
    # Fixes touch a few places: match the shared head and tail first, diff only the middle.
    head = 0
    while head < min(len(base), len(new)) and base[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(base), len(new)) - head and base[-1 - tail] == new[-1 - tail]:
        tail += 1
    out = original[:head]
    matcher = difflib.SequenceMatcher(None, base[head:len(base) - tail], new[head:len(new) - tail], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out.extend(original[head + i1:head + i2])
        else:
            out.extend(new[head + j1:head + j2])
    out.extend(original[len(original) - tail:])
    return b"".join(out)
