"""Gitignore-style patterns, matched as git's wildmatch matches them, in time linear in the name.

Exclude options, ``per-file-ignores`` and every ignore file come from the analysed tree, so a
pattern is untrusted input. A glob translated to a backtracking regex (``*a*a*a*...*b``) can take
hours on a 40-character name; git answers at once. Here a pattern is split at ``/`` into path
segments, and each segment at ``*`` into chunks of single-character atoms (literals, ``?``,
``[...]``): a chunk has a fixed length, so it is found by one leftmost search, and the chunks of a
segment are placed greedily, left to right (the leftmost place of a fixed-length chunk is never
worse than a later one). ``**`` segments are states of a small automaton over the path's segments.
Matching one pattern against one path costs at most O(len(path) * len(pattern)), never more.

Semantics follow ``gitignore(5)``: blank lines and ``#`` comments are skipped, trailing spaces
trimmed unless escaped, ``!`` negates, a trailing ``/`` matches folders only, a pattern with a
``/`` before its end is anchored to its base (else it matches a name at any depth), ``**/``,
``/**/`` and ``/**`` match across folders, and the last pattern that matches decides. A path
inside an excluded folder is excluded (git cannot re-include it either).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# Bounds, documented in the README's "Security model". A source (one ignore file, one config list)
# with more patterns than this is refused as a whole; matching costs patterns x files x path length.
MAX_PATTERNS = 10_000
# git's own limit on a path; a longer pattern can match nothing real.
MAX_PATTERN_LENGTH = 4096

_POSIX_CLASSES = {
    "alnum": "0-9A-Za-z",
    "alpha": "A-Za-z",
    "blank": " \\t",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "\\x21-\\x7e",
    "lower": "a-z",
    "print": "\\x20-\\x7e",
    "punct": re.escape("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"),
    "space": " \\t\\n\\r\\f\\v",
    "upper": "A-Z",
    "xdigit": "0-9A-Fa-f",
}
_ANY_DIRS = object()  # a `**` segment: zero or more folders
_SOME_DIRS = object()  # a trailing `/**`: everything inside, at least one more segment


class _Invalid(Exception):
    """A pattern git's wildmatch aborts on (an unterminated `[`): it matches nothing."""


class _Segment:
    """One path component's glob: fixed-length chunks separated by `*`."""

    __slots__ = ("chunks", "leading_star", "length", "literal", "trailing_star")

    def __init__(self, text: str) -> None:
        chunks: list[list[str]] = [[]]
        plain: list[str] = []
        literal = True
        i = 0
        while i < len(text):
            char = text[i]
            if char == "*":
                literal = False
                if chunks[-1] or len(chunks) == 1:
                    chunks.append([])
                i += 1
                continue
            if char == "\\" and i + 1 < len(text):
                i += 1
                chunks[-1].append(re.escape(text[i]))
                plain.append(text[i])
            elif char == "?":
                literal = False
                chunks[-1].append(".")
            elif char == "[":
                literal = False
                atom, i = _bracket(text, i)
                chunks[-1].append(atom)
                continue
            else:
                chunks[-1].append(re.escape(char))
                plain.append(char)
            i += 1
        self.literal = "".join(plain) if literal else None
        self.leading_star = not chunks[0]
        self.trailing_star = not chunks[-1] and len(chunks) > 1
        kept = [chunk for chunk in chunks if chunk]
        self.length = [len(chunk) for chunk in kept]
        self.chunks = [re.compile("".join(chunk), re.DOTALL) for chunk in kept]

    def matches(self, name: str) -> bool:
        if self.literal is not None:
            return name == self.literal
        chunks, lengths = self.chunks, self.length
        if not chunks:  # only stars
            return True
        if len(chunks) == 1 and not self.leading_star and not self.trailing_star:
            return len(name) == lengths[0] and chunks[0].fullmatch(name) is not None
        first, stop = 0, len(chunks)
        position, limit = 0, len(name)
        if not self.leading_star:
            if len(name) < lengths[0] or chunks[0].match(name) is None:
                return False
            position, first = lengths[0], 1
        if not self.trailing_star:
            end = len(name) - lengths[-1]
            if end < position or chunks[-1].match(name, end) is None:
                return False
            limit, stop = end, stop - 1
        for index in range(first, stop):
            found = chunks[index].search(name, position, limit)
            if found is None:
                return False
            position = found.end()
        return True


def _bracket(text: str, start: int) -> tuple[str, int]:
    """``[...]`` at ``text[start]`` as a regex class of one character, and the index after it."""
    i = start + 1
    negate = i < len(text) and text[i] in "!^"
    if negate:
        i += 1
    members: list[str] = []
    first = True
    while True:
        if i >= len(text):
            raise _Invalid
        char = text[i]
        if char == "]" and not first:
            i += 1
            break
        first = False
        if char == "[" and text.startswith("[:", i):
            end = text.find(":]", i + 2)
            if end < 0 or text[i + 2:end] not in _POSIX_CLASSES:
                raise _Invalid
            members.append(_POSIX_CLASSES[text[i + 2:end]])
            i = end + 2
            continue
        if char == "\\" and i + 1 < len(text):
            i += 1
            char = text[i]
        low = char
        i += 1
        if i + 1 < len(text) and text[i] == "-" and text[i + 1] != "]":
            high = text[i + 1]
            i += 2
            if high == "\\" and i < len(text):
                high = text[i]
                i += 1
            if low <= high:  # git: a reversed range matches nothing
                members.append(re.escape(low) + "-" + re.escape(high))
            continue
        members.append(re.escape(low))
    if not members:
        return ("." if negate else "(?!)"), i
    return ("[^" if negate else "[") + "".join(members) + "]", i


class Pattern:
    """One gitignore line, compiled."""

    __slots__ = ("anchored", "dir_only", "has_dirs", "negated", "segments", "text", "valid")

    def __init__(self, text: str, negated: bool, dir_only: bool, anchored: bool, body: str) -> None:
        self.text, self.negated, self.dir_only, self.anchored = text, negated, dir_only, anchored
        self.valid = True
        segments: list = []
        parts = body.split("/")
        for index, part in enumerate(parts):
            # git: a run of stars that is a whole segment matches across folders; `a**` is `a*`.
            if len(part) >= 2 and part.strip("*") == "" and anchored:
                marker = _SOME_DIRS if index == len(parts) - 1 and index > 0 else _ANY_DIRS
                if not (segments and segments[-1] is _ANY_DIRS and marker is _ANY_DIRS):
                    segments.append(marker)
                continue
            try:
                segments.append(_Segment(part))
            except _Invalid:
                self.valid = False
        self.segments = segments
        self.has_dirs = any(s is _ANY_DIRS or s is _SOME_DIRS for s in segments)

    def matches(self, parts: list[str], is_dir: bool) -> bool:
        if not self.valid or (self.dir_only and not is_dir):
            return False
        segments = self.segments
        if not self.anchored:
            return segments[0].matches(parts[-1])
        if not self.has_dirs:
            return len(parts) == len(segments) and all(s.matches(p) for s, p in zip(segments, parts))
        return self._walk(parts)

    def _walk(self, parts: list[str]) -> bool:
        segments = self.segments
        states = self._closure({0})
        for part in parts:
            following = set()
            for state in states:
                if state == len(segments):
                    continue
                segment = segments[state]
                if segment is _ANY_DIRS or segment is _SOME_DIRS:
                    following.add(state)  # one more folder inside the `**`
                    if segment is _SOME_DIRS:
                        following.add(state + 1)
                elif segment.matches(part):
                    following.add(state + 1)
            if not following:
                return False
            states = self._closure(following)
        return len(segments) in states

    def _closure(self, states: set[int]) -> set[int]:
        """States plus those reached by letting a `**/` stand for no folder at all."""
        result = set(states)
        pending = list(states)
        while pending:
            state = pending.pop()
            if state < len(self.segments) and self.segments[state] is _ANY_DIRS and state + 1 not in result:
                result.add(state + 1)
                pending.append(state + 1)
        return result


def parse(line: str) -> Pattern | None:
    """A gitignore line as a Pattern; None for a blank line or a comment."""
    line = _trim_trailing_spaces(line.rstrip("\r\n"))
    if not line or line.startswith("#"):
        return None
    text = line
    negated = line.startswith("!")
    if negated:
        line = line[1:]
    dir_only = line.endswith("/") and not line.endswith("\\/")
    # One slash each end, as git strips them: `a//` and `//a` keep an empty segment and match nothing.
    body = line[:-1] if dir_only else line
    if not body:
        return None
    anchored = "/" in body
    body = body.removeprefix("/")
    if not body:
        return None
    return Pattern(text, negated, dir_only, anchored, body)


def _trim_trailing_spaces(line: str) -> str:
    """Trailing spaces go, unless escaped with a backslash (``foo\\ `` keeps one)."""
    end = len(line)
    while end and line[end - 1] == " ":
        backslashes = 0
        while end - 1 - backslashes > 0 and line[end - 2 - backslashes] == "\\":
            backslashes += 1
        if backslashes % 2:
            break
        end -= 1
    return line[:end]


class GitIgnore:
    """The patterns of one source; ``check`` answers as git would for a path relative to their base."""

    def __init__(self, patterns: Iterable[Pattern]) -> None:
        self.patterns = list(patterns)
        # Folder verdicts are asked once per file below them: remembered, within a bound.
        self._folders: dict[str, bool | None] = {}

    @classmethod
    def from_lines(cls, lines: Iterable[str]) -> GitIgnore:
        return cls(pattern for pattern in map(parse, lines) if pattern is not None)

    def check(self, relative: str, is_dir: bool) -> bool | None:
        """True: excluded; False: re-included by a ``!`` pattern; None: no pattern has an opinion."""
        parts = [part for part in relative.split("/") if part and part != "."]
        if not parts or not self.patterns:
            return None
        verdict = None
        for depth in range(1, len(parts)):
            folder = "/".join(parts[:depth])
            if folder in self._folders:
                answer = self._folders[folder]
            else:
                answer = self._decide(parts[:depth], True)
                if len(self._folders) < 65_536:
                    self._folders[folder] = answer
            if answer:
                return True
            if answer is not None:
                verdict = answer
        answer = self._decide(parts, is_dir)
        return verdict if answer is None else answer

    def _decide(self, parts: list[str], is_dir: bool) -> bool | None:
        for pattern in reversed(self.patterns):
            if pattern.matches(parts, is_dir):
                return not pattern.negated
        return None


def too_many(patterns: Iterable[str]) -> str | None:
    """Why a source of patterns is refused (too many, or one too long), or None."""
    count = 0
    for pattern in patterns:
        count += 1
        if len(pattern) > MAX_PATTERN_LENGTH:
            return f"a pattern longer than {MAX_PATTERN_LENGTH} characters"
    if count > MAX_PATTERNS:
        return f"more than {MAX_PATTERNS} patterns"
    return None
