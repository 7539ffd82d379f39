"""A fix changes only the bytes of its own edits (issue 30, item 12).

Every snapshot input with a fix is re-run in variants a hostile (or merely old) file may come
in: form feeds at the start of lines, CR and CRLF endings, a BOM, a latin-1 and a utf-7 file
(with a line whose bytes have more than one spelling of the same text). A line the fix leaves
alone in the plain input must come out of the variant byte for byte as it went in.
"""

from __future__ import annotations

import difflib
import re
from functools import lru_cache

import pytest
from cases import all_cases, fix

CASES = [case for case in all_cases() if case.kind in ("rewrite", "unsafe")]


def _lines(data: bytes) -> list[bytes]:
    return re.findall(rb"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z", data)


def _form_feeds(data: bytes) -> bytes:
    # A form feed before a line that starts a statement is whitespace to Python; libcst drops it.
    return b"".join(b"\x0c" + line if line[:1].isalpha() or line[:1] == b"#" else line for line in _lines(data))


# (variant, prefix lines it adds, how it makes the variant)
VARIANTS = {
    "form_feed": (0, _form_feeds),
    "cr": (0, lambda data: data.replace(b"\n", b"\r")),
    "crlf": (0, lambda data: data.replace(b"\n", b"\r\n")),
    "bom": (0, lambda data: b"\xef\xbb\xbf" + data),
    # `+AOk-` and `+AOk` are both "é" in utf-7: Python's encoder writes the second.
    "utf7": (2, lambda data: b'# -*- coding: utf-7 -*-\n_ = "+AOk-"\n' + data.decode().encode("utf-7")),
    "latin1": (2, lambda data: b'# -*- coding: latin-1 -*-\n_ = "\xe9"\n' + data),
}


@lru_cache(maxsize=None)
def _plain(case):
    result = fix(case)
    assert result.changed, result.error
    return result.source, result.fixed


def _kept(before: bytes, after: bytes) -> set[int]:
    """Indices of the lines of ``before`` that ``after`` has unchanged."""
    matcher = difflib.SequenceMatcher(None, _lines(before), _lines(after), autojunk=False)
    return {i for tag, i1, i2, _j1, _j2 in matcher.get_opcodes() if tag == "equal" for i in range(i1, i2)}


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_a_fix_changes_no_byte_outside_its_own_edits(case, variant):
    shift, make = VARIANTS[variant]
    source, fixed = _plain(case)
    if variant == "utf7" and b"+" in source:
        pytest.skip("'+' is itself re-spelled in utf-7: the plain lines do not map one to one")
    untouched = _kept(source, fixed)
    data = make(source)
    result = fix(case, data)
    assert result.changed, result.error
    kept = _kept(data, result.fixed)
    lost = sorted(i for i in [*range(shift), *(i + shift for i in untouched)] if i not in kept)
    lines = _lines(data)
    assert not lost, [lines[i] for i in lost]
