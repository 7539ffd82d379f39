"""``ast.parse`` of a large file in pieces, for its peak memory (issue 55).

CPython's parser builds the whole file's C tree in an arena before it makes the Python
objects, so parsing a 440 kB test module peaks at more than twice what its tree holds (63 MB
for 28 MB on jax's pjit_test.py), and the largest file parsed whole sets the peak memory of a
run. Parsed in pieces of about ``PIECE`` bytes, one piece's arena is alive at a time.

A piece ends where a line starts a statement at the indentation of the statements it splits:
column 0 for a module's, the first member's for the body of a class bigger than two pieces
(jax's test modules are mostly one ``class`` each), and not after a decorator's line. A line of
that indentation that does not start a statement lies inside brackets, a string or a backslash
continuation, or continues a compound statement (``else:``, ``except``, a decorator spread over
lines): then the piece before it, or the one it opens, does not parse, and the file is parsed
whole as before. So the pieces parse exactly when the file parses, and give its statements at
its own lines and columns: each piece starts at the start of a line and is parsed after as many
line breaks as precede it (a class's later pieces as the body of an ``if 1:`` on the line
before them). ``tests/test_pieces.py`` compares the result with ``ast.parse`` on real files.
"""

from __future__ import annotations

import ast
import codecs
import re

# About this much source per parse (the arena of a piece is about 80 times its size).
PIECE = 1 << 16
# A coding declaration other than UTF-8's would apply to the first piece alone: such files are
# parsed whole.
_CODING = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", re.MULTILINE)
_CLASS_HEADER = re.compile(rb"(?:@[^\n]*\n)*class\b[^\n]*\n")
# The indentation of a class's first member (after blank and comment lines).
_MEMBER_INDENT = re.compile(rb"(?:[ \t]*(?:#[^\n]*)?\n)*( +)[^ \t\n#]")


def parse(source: bytes | str, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse(source, filename)``: in pieces when ``source`` is large and can be split
    exactly (the module docstring); whole otherwise, and whenever a piece does not parse (then
    ``ast.parse`` raises what it raises for the file). A text is split as its UTF-8 bytes (the
    columns of a tree are UTF-8 offsets either way)."""
    if len(source) > 2 * PIECE:
        try:
            data = source.encode() if isinstance(source, str) else source
            if _splittable(data, isinstance(source, str)):
                return ast.Module(body=_pieces(data, filename), type_ignores=[])
        except (SyntaxError, ValueError, RecursionError, MemoryError, _NotAClass):
            pass  # (a text that does not encode, a lone surrogate, is a ValueError)
    return ast.parse(source, filename=filename)


def _splittable(data: bytes, text: bool) -> bool:
    """Lines end in `\\n` alone (a lone `\\r` ends one too, which the cuts do not look for), and
    the pieces read as the file does: no coding declaration but UTF-8's (the first two lines
    would be the first piece's alone), and for a text, none at all (``ast.parse`` of a text
    ignores it, of bytes does not) and no byte order mark."""
    if b"\r" in data:
        return False
    first = data.find(b"\n")
    second = data.find(b"\n", first + 1) if first >= 0 else -1
    match = _CODING.search(data, 0, len(data) if second < 0 else second)
    if text:
        return match is None and not data.startswith(codecs.BOM_UTF8)
    return match is None or match.group(1).lower().replace(b"_", b"-") in (b"utf-8", b"utf8")


class _NotAClass(Exception):
    """A statement bigger than two pieces that is not a class this module can split."""


def _starts(source: bytes, indent: bytes, start: int, end: int) -> list[int]:
    """Where the lines in (start, end) that may start a statement at ``indent`` begin: the
    indentation, then a name or `@`, and the line before not a decorator's at that indentation."""
    found = []
    decorator = b"\n" + indent + b"@"
    for match in re.finditer(rb"\n" + indent + rb"[A-Za-z_@]", source[start:end]):
        at = start + match.start()
        previous = source.rfind(b"\n", 0, at)
        if not source.startswith(decorator, previous, at):
            found.append(at + 1)
    return found


def _groups(starts: list[int], start: int, end: int) -> list[tuple[int, int, bool]]:
    """[start, end) cut at some of ``starts`` into spans of at least ``PIECE`` bytes where it
    can be, each with whether it is one statement bigger than two pieces (alone in its span)."""
    bounds = [start, *starts, end]
    spans: list[tuple[int, int, bool]] = []
    begin = start
    for low, high in zip(bounds, bounds[1:]):
        if high - low > 2 * PIECE:
            if low > begin:
                spans.append((begin, low, False))
            spans.append((low, high, True))
            begin = high
        elif high - begin >= PIECE or high == end:
            spans.append((begin, high, False))
            begin = high
    return spans


def _pieces(source: bytes, filename: str) -> list[ast.stmt]:
    if b"barry_as_FLUFL" in source:
        raise _NotAClass  # a future import that changes how the later pieces would parse
    groups = _groups(_starts(source, b"", 0, len(source)), 0, len(source))
    body: list[ast.stmt] = []
    index = 0
    while index < len(groups):
        start, end, single = groups[index]
        if single and _CLASS_HEADER.match(source, start, end):
            try:
                body.append(_split_class(source, start, end, filename))
                index += 1
                continue
            except (SyntaxError, _NotAClass):
                pass  # parsed as a piece below
        found, index = _parse_from(source, groups, index, filename)
        body += found
    return body


def _parse_from(source: bytes, groups: list[tuple[int, int, bool]], index: int, filename: str, wrapped: bool = False):
    """(The statements of the piece that opens at ``groups[index]``, the index of the group
    after it): the group parsed, or where it does not parse (a cut in a string, in brackets)
    with the next groups joined to it until it does. A piece that parses ends where the file's
    own statement ends: a prefix of the file that stops inside a string, brackets or a
    continuation does not parse. ``wrapped``: members of a class, parsed under an ``if 1:``."""
    start = groups[index][0]
    line = source.count(b"\n", 0, start)
    prefix = b"\n" * (line - 1) + b"if 1:\n" if wrapped else b"\n" * line
    for last in range(index, len(groups)):
        try:
            tree = ast.parse(prefix + source[start : groups[last][1]], filename=filename)
        except SyntaxError:
            if last == len(groups) - 1:
                raise
            continue
        if not wrapped:
            return tree.body, last + 1
        (block,) = tree.body
        return block.body, last + 1
    raise AssertionError("unreachable")


def _split_class(source: bytes, start: int, end: int, filename: str) -> ast.ClassDef:
    """The class that ``source[start:end]`` holds, its body parsed in pieces cut at its members'
    indentation: the first piece as it stands, the others each as the body of an ``if 1:`` on
    the line before them."""
    header = _CLASS_HEADER.match(source, start, end)
    indent = _MEMBER_INDENT.match(source, header.end(), end)
    if not indent:
        raise _NotAClass
    # (A member bigger than two pieces is a piece of its own.)
    groups = _groups(_starts(source, indent.group(1), header.end(), end), start, end)
    first, index = _parse_from(source, groups, 0, filename)
    if len(first) != 1 or not isinstance(first[0], ast.ClassDef):
        raise _NotAClass
    cls = first[0]
    while index < len(groups):
        members, index = _parse_from(source, groups, index, filename, wrapped=True)
        cls.body += members
    last = cls.body[-1]
    cls.end_lineno, cls.end_col_offset = last.end_lineno, last.end_col_offset
    return cls
