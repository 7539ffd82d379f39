"""Where words occur in source text, found without parsing it: the lines of sorted positions,
where names are called, and the ``def`` lines of decorated functions.

A rule's cheap first look at a file (the lines that may hold a finding, the region of the tree
worth walking) asks these before any tree exists. They are built for speed on large files:
one regex whose branches start with a literal, searched in the reversed text where that puts
the literal first, instead of one ``str.find`` per word.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping
from functools import cache, lru_cache

from jax_codemod.analysis.context import count_line_breaks
from jax_codemod.analysis.patterns import POSSESSIVE, alternation

# A decorated function: `@` lines (with blank and comment lines between them), then the `def`.
DECORATED_DEF = re.compile(r"^[ \t]*@.*\n(?:[ \t]*(?:@.*|#.*)?\n)*[ \t]*(?:async[ \t]+)?def\b", re.MULTILINE)


def lines_of(text: str, positions: list[int]) -> set[int]:
    """The lines of sorted character ``positions`` (1-based, line breaks as the tokenizer counts)."""
    lines, line, previous = set(), 1, 0
    for position in positions:
        line += count_line_breaks(text, previous, position)
        previous = position
        lines.add(line)
    return lines


@cache
def reversed_calls(words: frozenset[str], not_after: str, modules: frozenset[str] = frozenset()) -> re.Pattern[str]:
    """A call of one of ``words`` (`word (`), not right after ``not_after``, nor right after one
    of ``modules`` and a dot (`jp.array(` with `jp` a whole name), as it reads in the reversed
    text."""
    guard = f"(?!{re.escape(not_after[::-1])})" if not_after else ""
    for module in sorted(modules):
        guard += rf"(?!\.{re.escape(module[::-1])}(?![\w.]))"
    return re.compile(rf"\([ \t]*{POSSESSIVE}{alternation(w[::-1] for w in words)}(?!\w){guard}")


def called_positions(text: str, words, not_after: str = "", table: frozenset[str] | None = None) -> list[int]:
    """Where one of ``words`` is called as a whole word (`word (`, not `xword(`), not right
    after ``not_after`` (`jnp.asarray(` is not NumPy's), in decreasing order.

    Searched in the reversed text, where the parenthesis comes first: a regex whose branches
    start with a literal runs at the engine's speed, one str.find per word over the text
    (tens of them: the transforms' names) does not. ``table``: the part of ``words`` that is a
    fixed table (the transforms' names), searched that way; the rest, a file's own names, one
    find each (a regex of them would be compiled for this file alone, which costs more than
    the finds: a millisecond a file).
    """
    if not words:
        return []
    words = frozenset(words)
    own = frozenset() if table is None else words - table
    common = words - own
    found = []
    if common:
        last = len(text) - 1
        found = [last - (match.end() - 1) for match in reversed_calls(common, not_after).finditer(text[::-1])]
    if own:
        found += own_calls(text, own, not_after)
        found.sort(reverse=True)
    return found


def occurrences(text: str, word: str) -> list[int]:
    """Where ``word`` occurs in ``text``, overlapping ones too, one ``str.find`` at a time."""
    found, at = [], text.find(word)
    while at != -1:
        found.append(at)
        at = text.find(word, at + 1)
    return found


def word_starts(text: str, word: str):
    """Where ``word`` occurs in ``text`` not right after a letter, digit or underscore (`set_mesh`
    in `jax.set_mesh(`, not in `test_set_mesh_points`), one ``str.find`` at a time."""
    at = text.find(word)
    while at != -1:
        if not at or not (text[at - 1].isalnum() or text[at - 1] == "_"):
            yield at
        at = text.find(word, at + 1)


def _word_char(char: str) -> bool:
    return char.isalnum() or char == "_"  # what `\w` matches, character by character


def find_word(text: str, word: str, start: int = 0, end: int | None = None) -> int:
    """Where ``word`` first occurs in ``text[start:end]`` as a whole word (no letter, digit or
    `_` right before or after it, in ``text``), or -1."""
    end = len(text) if end is None else end
    size, length = len(text), len(word)
    at = text.find(word, start, end)
    while at != -1:
        after = at + length
        if (not at or not _word_char(text[at - 1])) and (after == size or not _word_char(text[after])):
            return at
        at = text.find(word, at + 1, end)
    return -1


# Names that share their first characters (`test_...`, a test module's methods) are counted in
# one search for that prefix when there are this many. A name searched alone costs a scan of the
# text up to its second whole occurrence (all of it for a name found once), and a step of about
# 0.3 us per occurrence inside a longer word before that (`f` in a large file): more than
# ``_SEARCHED`` such names, or one with more steps than a ``_STEPS``th of the text's
# characters, and one count of every word of the text costs less (measured on the corpus:
# 12-16 ns a character for an ASCII text, three times that for another, against 0.3-0.4 ns for
# a whole scan, and most names are found again well before the end).
_PREFIX, _GROUPED, _SEARCHED, _STEPS = 4, 6, 256, 16
_WORDS = re.compile(r"\w+")


def words_once(text: str, words, every_word: Callable[[], Mapping[str, int]] | None = None) -> set[str]:
    """The ``words`` (identifiers) that occur in ``text`` exactly once as a whole word: those of
    which ``collections.Counter(re.findall(r"\\w+", text))`` counts one. ``every_word``: that
    count, when the caller has a cheaper way to it (``Cut.word_counts``).

    Names sharing their first characters (a test module's `test_*` methods, hundreds of them)
    are found in one search for what they share: every word that starts with it (after no
    word character) is read whole (``\\w*`` takes the rest of it) and counted."""
    groups: dict[str, set[str]] = {}
    for word in words:
        groups.setdefault(word[:_PREFIX], set()).add(word)
    alone = [word for group in groups.values() if len(group) < _GROUPED for word in group]
    if len(alone) > _SEARCHED:
        return _once_among(text, words, every_word)
    once, many = set(), []
    for word in alone:
        found = _whole_occurrences(text, word)
        if found is None:
            many.append(word)
        elif found == 1:
            once.add(word)
    if many:
        once |= _once_among(text, many, every_word)
    for prefix, group in groups.items():
        if len(group) < _GROUPED:
            continue
        counts = dict.fromkeys(group, 0)
        for match in _starting_with(prefix).finditer(text):
            at = match.start()
            if at and _word_char(text[at - 1]):
                continue  # inside a word: what the match took is that word's rest
            found = match.group()
            if found in counts:
                counts[found] += 1
        once.update(word for word, count in counts.items() if count == 1)
    return once


def _whole_occurrences(text: str, word: str) -> int | None:
    """How often ``word`` occurs in ``text`` as a whole word, counted up to 2 (the search stops
    at the second); None after more occurrences inside longer words than a ``_STEPS``th of the
    text's characters."""
    found = steps = 0
    size, length, find = len(text), len(word), text.find
    most = size // _STEPS
    at = find(word)
    while at != -1:
        after = at + length
        if (not at or not _word_char(text[at - 1])) and (after == size or not _word_char(text[after])):
            found += 1
            if found == 2:
                return found
        else:
            steps += 1
            if steps > most:
                return None
        at = find(word, at + 1)
    return found


def _once_among(text: str, words, every_word) -> set[str]:
    counts = every_word() if every_word is not None else Counter(_WORDS.findall(text))
    return {word for word in words if counts.get(word) == 1}


@lru_cache(maxsize=64)
def _starting_with(prefix: str) -> re.Pattern[str]:
    # Opens with a literal, which the engine searches for (a lookbehind first would make it
    # try every position).
    return re.compile(re.escape(prefix) + r"\w*")


def own_calls(text: str, words, not_after: str = "") -> list[int]:
    """``called_positions`` of ``words``, one ``str.find`` per word: for words a single file
    asks about (its imports), whose regex would be compiled once and used once."""
    found = []
    size = len(text)
    for word in words:
        length = len(word)
        for at in word_starts(text, word):
            if not (not_after and text.endswith(not_after, 0, at)):
                after = at + length
                while after < size and text[after] in " \t":
                    after += 1
                if after < size and text[after] == "(":
                    found.append(at)
    return found


def decorated_def_lines(text: str) -> set[int]:
    """The `def` lines of decorated functions: where ``DECORATED_DEF`` matches end. The regex is
    tried only at a line whose first character other than a space or tab is `@` (an `@` is
    rare in code), not at every line start."""
    lines, line, previous = set(), 1, 0
    done = -1  # where the last match ended, or the last line start tried
    at = text.find("@")
    while at != -1:
        start = text.rfind("\n", 0, at) + 1
        if start > done and not text[start:at].strip(" \t"):
            match = DECORATED_DEF.match(text, start)
            done = start
            if match is not None:
                position = match.end()
                line += count_line_breaks(text, previous, position)
                previous = position
                lines.add(line)
                done = position
        at = text.find("@", max(at + 1, done))
    return lines
