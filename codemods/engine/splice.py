"""A fix changes only the bytes of its own edits.

libcst prints a module almost as it read it, not quite: it drops a form feed at the start of a
line, and it re-encodes a file in its declared encoding (a ``utf-7`` line can come back as
other bytes for the same text). Neither is the fix's doing, and a bot's commit must not carry
them. So the printout of the unchanged parse (the ``baseline``) is compared with the fixed
printout line by line: lines they share are taken from the original file, byte for byte, and
only the lines the fix changed come from the fixed printout.

Every line comparison of the engine and its outputs (this splice, a notebook cell written back,
SARIF's replacements, a finding's line before the fix) goes through ``line_opcodes``: difflib's
``SequenceMatcher`` is quadratic or worse on repeated lines (issue 53: a 16 kB file of repeated
lines took 29 s), and a file is the attacker's to choose.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Hashable, Sequence

# The tokenizer's line ends (as for Python itself: a form feed or U+2028 ends no line).
_LINE = re.compile(rb"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")

# A gap between anchors is aligned by difflib (a minimal diff) only while it is this small
# (lines of one side times lines of the other), so its cost is bounded by a constant per line.
_EXACT_GAP = 1024
# How many times a gap is split again at the lines unique within it; past that, the gap is one
# replacement (a correct diff, maybe not the smallest). Each level costs O(n log n).
_MAX_DEPTH = 8

Opcode = tuple[str, int, int, int, int]


def lines(data: bytes) -> list[bytes]:
    return _LINE.findall(data)


def line_opcodes(a: Sequence[Hashable], b: Sequence[Hashable]) -> list[Opcode]:
    """``difflib.SequenceMatcher(None, a, b).get_opcodes()`` in O(n log n) by construction.

    The shared head and tail are matched first; what is between is split at the lines that
    occur once in each side (patience diff: the longest run of such lines in the same order),
    and so on within each gap; a small gap is handed to difflib, a large one without such lines
    is aligned greedily (``_realign``). The opcodes cover both sides in order, and an ``equal`` block is
    equal: a valid diff, and difflib's own on ordinary edits (a few changed places).
    """
    raw: list[Opcode] = []
    if len(a) * len(b) <= _EXACT_GAP:
        _middle(a, b, 0, len(a), 0, len(b), raw, 0)  # small: difflib's own answer
    else:
        _align(a, b, 0, len(a), 0, len(b), raw, 0)
    out: list[Opcode] = []
    for tag, i1, i2, j1, j2 in raw:
        if i1 == i2 and j1 == j2:
            continue
        if tag != "equal":
            tag = "insert" if i1 == i2 else "delete" if j1 == j2 else "replace"
        if out and out[-1][0] == tag and tag == "equal":
            out[-1] = (tag, out[-1][1], i2, out[-1][3], j2)
        elif out and out[-1][0] != "equal" and tag != "equal":
            merged = (out[-1][1], i2, out[-1][3], j2)
            out[-1] = ("insert" if merged[0] == merged[1] else "delete" if merged[2] == merged[3] else "replace",
                       *merged)
        else:
            out.append((tag, i1, i2, j1, j2))
    return out


def _align(a, b, alo: int, ahi: int, blo: int, bhi: int, out: list[Opcode], depth: int) -> None:
    head = alo
    while head < ahi and blo + head - alo < bhi and a[head] == b[blo + head - alo]:
        head += 1
    shared = head - alo
    out.append(("equal", alo, head, blo, blo + shared))
    alo, blo = head, blo + shared
    tail = 0
    while tail < ahi - alo and tail < bhi - blo and a[ahi - 1 - tail] == b[bhi - 1 - tail]:
        tail += 1
    amid, bmid = ahi - tail, bhi - tail
    _middle(a, b, alo, amid, blo, bmid, out, depth)
    out.append(("equal", amid, ahi, bmid, bhi))


def _middle(a, b, alo: int, ahi: int, blo: int, bhi: int, out: list[Opcode], depth: int) -> None:
    if alo == ahi or blo == bhi:
        out.append(("replace", alo, ahi, blo, bhi))
        return
    if (ahi - alo) * (bhi - blo) <= _EXACT_GAP:
        matcher = difflib.SequenceMatcher(None, a[alo:ahi], b[blo:bhi], autojunk=False)
        out.extend((tag, alo + i1, alo + i2, blo + j1, blo + j2) for tag, i1, i2, j1, j2 in matcher.get_opcodes())
        return
    anchors = _anchors(a, b, alo, ahi, blo, bhi) if depth < _MAX_DEPTH else []
    if not anchors:
        _realign(a, b, alo, ahi, blo, bhi, out)
        return
    i, j = alo, blo
    for ai, bj in anchors:
        _align(a, b, i, ai, j, bj, out, depth + 1)
        out.append(("equal", ai, ai + 1, bj, bj + 1))
        i, j = ai + 1, bj + 1
    _align(a, b, i, ahi, j, bhi, out, depth + 1)


# How far ``_realign`` looks past a difference for the two sides to agree again (lines of both).
_REALIGN = 8


def _realign(a, b, alo: int, ahi: int, blo: int, bhi: int, out: list[Opcode]) -> None:
    """A gap without anchors (repeated lines), aligned greedily: equal lines are followed, and
    past a difference the nearest pair of equal lines within ``_REALIGN`` lines of both sides is
    where they agree again; farther than that, the rest is one replacement. At most
    ``_REALIGN ** 2`` comparisons per difference: linear. (A fix's edits are a few lines apart
    from each other: a file of thousands of equal lines keeps them as its own.)"""
    i, j = alo, blo
    while i < ahi and j < bhi:
        start_i, start_j = i, j
        while i < ahi and j < bhi and a[i] == b[j]:
            i, j = i + 1, j + 1
        out.append(("equal", start_i, i, start_j, j))
        if i == ahi or j == bhi:
            break
        again = next(((i + di, j + step - di) for step in range(1, _REALIGN + 1) for di in range(step + 1)
                      if i + di < ahi and j + step - di < bhi and a[i + di] == b[j + step - di]), None)
        if again is None:
            break
        out.append(("replace", i, again[0], j, again[1]))
        i, j = again
    out.append(("replace", i, ahi, j, bhi))


def _anchors(a, b, alo: int, ahi: int, blo: int, bhi: int) -> list[tuple[int, int]]:
    """(i, j) of the lines once in ``a[alo:ahi]`` and once in ``b[blo:bhi]``, the longest chain of
    them in the same order on both sides (patience sorting: O(k log k))."""
    import bisect

    seen: dict = {}
    for i in range(alo, ahi):
        seen[a[i]] = -1 if a[i] in seen else i
    where: dict = {}
    for j in range(blo, bhi):
        line = b[j]
        if seen.get(line, -1) >= 0:
            where[line] = -1 if line in where else j
    pairs = sorted((seen[line], j) for line, j in where.items() if j >= 0)
    # The longest increasing run of j over the pairs, in i order.
    tops: list[int] = []  # the smallest last j of a run of each length
    top_index: list[int] = []
    back: list[int] = []
    for index, (_i, j) in enumerate(pairs):
        length = bisect.bisect_left(tops, j)
        if length == len(tops):
            tops.append(j)
            top_index.append(index)
        else:
            tops[length] = j
            top_index[length] = index
        back.append(top_index[length - 1] if length else -1)
    chain = []
    index = top_index[-1] if top_index else -1
    while index >= 0:
        chain.append(pairs[index])
        index = back[index]
    return chain[::-1]


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
    out: list[bytes] = []
    for tag, i1, i2, j1, j2 in line_opcodes(base, new):
        if tag == "equal":
            out.extend(original[i1:i2])
        else:
            out.extend(new[j1:j2])
    return b"".join(out)
