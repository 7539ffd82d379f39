"""Regex pieces the text scans share, built for the engine's speed on large files: a repeat
that gives nothing back, a list of words as a group that branches on letters, and a lookahead
of their first characters. Each matches what the plain spelling does where its docstring says;
``tests/test_patterns.py`` checks them against it.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable

# A repeat that gives back nothing it took (`\s*+`, Python 3.11's possessive form): where what
# follows it can never begin with what it takes (a name after the spaces before it), it matches
# what the plain repeat does, without the engine trying every shorter repeat again when what
# follows fails, at every dot of a file. Python 3.10 has no such form: the plain repeat.
POSSESSIVE = "+" if sys.version_info >= (3, 11) else ""


def alternation(words: Iterable[str]) -> str:
    """``words`` as one regex group, factored on their common prefixes (`i(?:s_ready|tem)`
    for `is_ready|item`): the engine tries the branches of one first letter, not every word.
    It matches what ``(?:w1|w2|...)`` does where what follows cannot go on with a word
    character (`(?!\\w)`, `\\s*\\(`): a word that begins another (`device`, `devices`) is tried
    after it, not before, and then only one of them can match."""
    words = sorted(set(words))
    if not words:
        return "(?!)"
    heads: dict[str, list[str]] = {}
    for word in words:
        if word:
            heads.setdefault(word[0], []).append(word[1:])
    branches = [re.escape(head) + alternation(rests) if rests != [""] else re.escape(head) for head, rests in heads.items()]
    group = "(?:" + "|".join(branches) + ")" if len(branches) > 1 else branches[0]
    return f"(?:{group})?" if "" in words else group


def starts_of(words: Iterable[str]) -> str:
    """A lookahead for the first characters of ``words``: at the start of a pattern, the engine
    skips to a position one of them is at instead of trying the pattern at every one (twice as
    fast over JAX's sources); after a literal, it drops the position before any branch."""
    return "(?=[" + "".join(sorted({re.escape(word[0]) for word in words if word})) + "])"
