"""A module's top-level statements read from its text, without parsing it: the cuts a partial
reading (``analysis.partial``) makes, the stubs it puts in place of the blocks it drops, and the
few questions about strings and brackets those cuts need answered."""

from __future__ import annotations

import bisect
import keyword
import re
from functools import cache
from itertools import pairwise

from jax_codemod.analysis.patterns import POSSESSIVE

# A line that may start a top-level statement: code at column 0 (not a comment, not a closing
# bracket); `def`/`class` headers and decorators named.
# (``\n`` first: a literal prefix the regex engine searches fast; ``^`` with MULTILINE tries
# every position.)
_COLUMN_ZERO = re.compile(r"\n(?=[^\s#)\]}])")
# Every word and run of blanks gives nothing back (``patterns.POSSESSIVE``): what follows
# each is no word character, or no blank, so the matches are the same; a line that is none of
# these (`import x`) fails each branch at once instead of retrying every shorter first word.
_W, _B = rf"\w+{POSSESSIVE}", rf"[ \t]*{POSSESSIVE}"
_HEADER = re.compile(
    rf"(?:async[ \t]+{POSSESSIVE})?def[ \t]+{POSSESSIVE}(\w+)|class[ \t]+{POSSESSIVE}(\w+)|(@)"
    # Clauses of the compound statement above: no statements of their own.
    r"|(?P<clause>else|elif|except|finally)\b"
    # An assignment of a display, a literal or a builtin container call to one name
    # (`TABLE = {...}`, `data = dict(...)`) or to an item (`data["f32"] = dict(...)`): it binds
    # the name to no module and no transform, like `TABLE = None`.
    rf"|({_W}){_B}=(?!=){_B}(?=[\[{{\"'0-9]|[rbfuRBFU]{{1,2}}[\"']|(?:dict|list|tuple|set|frozenset)\()"
    rf"|({_W}(?:\[[^\n=]*\])+{_B}=(?!=){_B}(?=[\[{{\"'0-9]|[rbfuRBFU]{{1,2}}[\"']|(?:dict|list|tuple|set|frozenset)\())"
    # `name = f(...)`: binds the name to no module; an alias only if `f` is a transform or
    # `partial` (the caller checks the callee).
    rf"|({_W}){_B}=(?!=){_B}(?=([\w.]+){_B}\()"
    # A call, a string or an annotation as a statement: binds nothing a module-level
    # reader looks at (the first word is no keyword).
    rf"|(?=({_W})[\w.]*{_B}\(|({_W}){_B}:(?!=)|[\"']|[rbfuRBFU]{{1,2}}[\"'])"
)
_STATEMENT_KEYWORDS = frozenset(keyword.kwlist) | {"match", "case", "type"}
# The builtins those assignments may call: a file that rebinds one is read whole.
CONTAINER_CALLS = ("dict", "list", "tuple", "set", "frozenset")
_LINE_LEXEME = re.compile(r"#|\"|'")


class Block:
    """A top-level statement as the text shows it: lines ``start``..``end`` (1-based, inclusive,
    trailing blank and comment lines included), characters ``begin``..``finish``.

    ``kind``: "def", "class", "assign" (``name = <display, literal or container call>``),
    "call" (``name = callee(...)``), "item" (a display or literal assigned to an item; a call,
    string or annotation as a statement) or "other"; ``name``: the name a `def`, `class` or
    "assign" block binds; ``decorated``: it has decorators; ``callee``: the called name of a
    "call" block (`name = callee(...)`); ``header``: where the line of the statement itself
    begins (after its decorators; ``begin`` when it has none); ``indent``: for a statement of a
    module-level class's body (``class_members``), that body's indentation ("" at module
    level).

    A plain class with slots: a file has thousands of blocks, and a frozen dataclass's
    ``__init__`` (one ``object.__setattr__`` per field) made making them most of the cutting.
    Treat it as immutable.
    """

    __slots__ = ("begin", "callee", "decorated", "end", "finish", "header", "indent", "kind", "name", "start")
    _FIELDS = ("start", "end", "begin", "finish", "name", "decorated", "kind", "callee", "header", "indent")

    def __init__(
        self,
        start: int,
        end: int,
        begin: int,
        finish: int,
        name: str | None,
        decorated: bool = False,
        kind: str = "other",
        callee: str | None = None,
        header: int | None = None,
        indent: str = "",
    ) -> None:
        self.start, self.end, self.begin, self.finish = start, end, begin, finish
        self.name, self.decorated, self.kind, self.callee = name, decorated, kind, callee
        self.header = begin if header is None else header
        self.indent = indent

    def line_breaks(self, text: str) -> int:
        """``text.count("\\n", begin, finish)`` of the text the block was cut from, without
        reading it: each of its lines ends in a break but the last line of the text's last
        block (``end`` counts what follows the text's final break as a line)."""
        return self.end - self.start + (self.finish != len(text))

    def _fields(self) -> tuple:
        return (
            self.start,
            self.end,
            self.begin,
            self.finish,
            self.name,
            self.decorated,
            self.kind,
            self.callee,
            self.header,
            self.indent,
        )

    def __eq__(self, other: object) -> bool:
        return self._fields() == other._fields() if isinstance(other, Block) else NotImplemented

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return "Block(" + ", ".join(f"{n}={v!r}" for n, v in zip(self._FIELDS, self._fields())) + ")"


def string_interiors(text: str) -> list[tuple[int, int]] | None:
    """(first, last) character offsets of the inside of every triple-quoted string, or None
    when unsure (a backslash-continued line, an unterminated string). Only the lines holding
    a triple quote are read, each from where the reading last stopped: single-quoted strings
    and comments on them are skipped, so that `'\"\"\"'` and `# \'\'\'` open nothing."""
    spans: list[tuple[int, int]] = []
    position = 0  # outside any string here
    size = len(text)
    double = single = -1
    while True:
        # str.find, twice: an alternation of the two has no literal prefix and is 10x slower.
        if double < position:
            double = text.find('"""', position) % (size + 1)  # not found: size
        if single < position:
            single = text.find("'''", position) % (size + 1)
        found = min(double, single)
        if found == size:
            return spans
        line_start = text.rfind("\n", 0, found) + 1
        cursor = max(line_start, position)
        if cursor == line_start and line_start >= 2 and text[line_start - 2] == "\\":
            return None
        while True:
            at = _LINE_LEXEME.search(text, cursor, found + 1).start()  # text[found] is a quote
            if at == found or text[at] == "#":
                break
            cursor = _single_quoted_end(text, at)
            if cursor < 0:
                return None
            if cursor > found:
                break  # the triple quote is inside this string
        if text[at] == "#":
            position = text.find("\n", found) + 1 or len(text)
            continue
        if cursor > found:
            position = cursor
            continue
        delimiter = text[found : found + 3]
        close = _unescaped(text, delimiter, found + 3)
        if close < 0:
            return None
        spans.append((found + 3, close))
        position = close + 3


def _unescaped(text: str, quote: str, start: int) -> int:
    """The first ``quote`` from ``start`` that no backslash escapes, or -1."""
    while True:
        close = text.find(quote, start)
        if close < 0:
            return -1
        backslashes = 0
        while text[close - 1 - backslashes] == "\\":
            backslashes += 1
        if backslashes % 2 == 0:
            return close
        start = close + 1


def _single_quoted_end(text: str, at: int) -> int:
    """Just past the single-quoted string opening at ``at``; -1 unless it ends on its line."""
    close = _unescaped(text, text[at], at + 1)
    newline = text.find("\n", at)
    if close < 0 or (0 <= newline < close):
        return -1
    return close + 1


def top_level_blocks(text: str, interiors: list[tuple[int, int]] | None = None) -> list[Block] | None:
    """The file's top-level statements read from its text, or None when unsure.

    A statement starts at a line with code at column 0 that is not inside a multi-line
    string; decorators belong to the `def` or `class` below them. A line inside brackets or
    after a backslash can look like a start too: a block cut there does not parse on its
    own, which is why a caller parses what it keeps and falls back to the whole file on a
    SyntaxError.
    """
    if "\r" in text or "\f" in text or "\v" in text:
        return None  # line ends the regexes miss; a form feed resets the indentation
    if interiors is None:
        interiors = string_interiors(text)
        if interiors is None:
            return None
    heads: list[tuple[int, int, tuple | None]] = []  # (line, offset, the header's groups)
    line, counted = 1, 0
    inside, last = 0, len(interiors)
    match_header, count = _HEADER.match, text.count
    first = [0] if text[:1] and text[0] not in " \t\n#)]}\f\v" else []
    for offset in (*first, *[match.end() for match in _COLUMN_ZERO.finditer(text)]):
        while inside < last and interiors[inside][1] < offset:
            inside += 1
        if inside < last and interiors[inside][0] <= offset:
            continue  # a line of a multi-line string
        if offset >= 2 and text[offset - 2] == "\\":
            return None  # continues the line above: not a statement of its own
        header = match_header(text, offset)
        groups = None if header is None else header.groups()
        if groups is not None and groups[3]:
            continue  # `else:` and its siblings continue the statement above
        line += count("\n", counted, offset)
        counted = offset
        heads.append((line, offset, groups))
    blocks: list[Block] = []
    total = count("\n", counted) + line
    index, size = 0, len(heads)
    while index < size:
        start, begin, groups = heads[index]
        header = begin
        decorated = groups is not None and groups[2] is not None
        while groups is not None and groups[2] is not None and index + 1 < size:
            index += 1
            header, groups = heads[index][1], heads[index][2]  # the decorated statement's own header
        index += 1
        end, finish = (heads[index][0] - 1, heads[index][1]) if index < size else (total, len(text))
        name, kind, callee = _classified(groups, decorated)
        blocks.append(Block(start, end, begin, finish, name, decorated, kind, callee, header))
    return blocks


@cache
def _member_lines(indent: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """(a line that starts a statement of a body indented ``indent``; a line with code that
    is not in that body: neither that indentation nor deeper, not blank, not a comment)."""
    at = re.escape(indent)
    return re.compile(rf"\n(?={at}[^ \t\n#)\]}}])"), re.compile(rf"\n(?!{at}|[ \t]*(?:#|\n|\Z))")


def class_members(text: str, block: Block, interiors: list[tuple[int, int]], starts: list[int]) -> list[Block] | None:
    """A module-level `class` block cut into the statements of its body, or None when unsure.

    The first block is the class's decorators and header ("head"); then one block per
    statement at the body's indentation, of the kinds ``top_level_blocks`` gives (a method is
    a "def", its decorators with it; a nested class a "class"), each with ``indent`` set. Cut where
    ``top_level_blocks`` cuts, one level in: a line at the body's indentation, not in a
    triple-quoted string, starts a statement. A line inside brackets can look like one too;
    a block but a `def` or `class` that does not balance its brackets, or decorators that do
    not, makes the answer None (a continuation closes what it did not open, so the last piece of a statement
    cut apart never balances, and it is no plain `def` or `class`: those do not start inside
    brackets). None too for a body on the header's line, a line that continues a backslash at
    the body's indentation, and a line with code at another indentation that is not deeper
    (tabs and spaces mixed, a bracket's line dedented past the body).
    """
    body = _class_body(text, block, interiors, starts)
    if body is None:
        return None
    position, indent = body
    finish = block.finish
    member_start, elsewhere = _member_lines(indent)
    search = elsewhere.search
    at = position - 1
    while True:
        found = search(text, at, finish)
        if found is None:
            break
        line = found.start() + 1
        inside = bisect.bisect_right(starts, line) - 1
        if not (inside >= 0 and line <= interiors[inside][1]):
            return None  # code in no body line: not a cut this reading can make
        at = interiors[inside][1]
    heads: list[tuple[int, tuple]] = []
    size = len(indent)
    for found in member_start.finditer(text, position - 1, finish):
        line = found.start() + 1
        inside = bisect.bisect_right(starts, line) - 1
        if inside >= 0 and line <= interiors[inside][1]:
            continue  # a line of a multi-line string
        if text[line - 2] == "\\":
            return None  # continues the line above
        header = _HEADER.match(text, line + size)
        groups = None if header is None else header.groups()
        if groups is not None and groups[3]:
            continue  # `else:` and its siblings continue the statement above
        heads.append((line, groups))
    if not heads or heads[0][0] != position:
        return None
    members = [Block(block.start, 0, block.begin, position, block.name, block.decorated, "head", None, block.header, indent)]
    line_number, counted = block.start, block.begin
    index, count = 0, len(heads)
    while index < count:
        begin, groups = heads[index]
        header, decorated = begin, groups is not None and groups[2] is not None
        while groups is not None and groups[2] is not None:
            index += 1
            if index == count:
                return None  # decorators of nothing: not Python
            header, groups = heads[index]
        index += 1
        stop = heads[index][0] if index < count else finish
        line_number += text.count("\n", counted, begin)
        counted = begin
        name, kind, callee = _classified(groups, decorated)
        if decorated and not brackets_balance(text, begin, header, interiors, starts):
            return None
        if kind not in ("def", "class") and not brackets_balance(text, begin, stop, interiors, starts):
            return None
        members.append(Block(line_number, 0, begin, stop, name, decorated, kind, callee, header, indent))
    for previous, following in pairwise(members):
        previous.end = following.start - 1
    members[-1].end = block.end
    return members


# The headers of the compound statements whose suites hold statements of the scope around them
# (no scope of their own, unlike `def` and `class`); `match` and `case` are left out (unsure).
_BLANKS = re.compile(r"[ \t]*")
_SUITE_HEADER = re.compile(r"(?:async[ \t]+)?(?:if|elif|else|for|while|with|try|except|finally)\b")
# What the bracket depth of a body is read from: brackets, line ends, backslashes, comments,
# triple quotes (skipped to their string's end) and single-quoted strings (a quote that starts
# none on its line is matched alone: unsure).
_QUOTE_HASH_BACKSLASH = re.compile(r"[\"'#\\\\]")
_DEPTH_MARKS = re.compile(
    r"""[()\[\]{}\n]|\\|#[^\n]*|\"\"\"|'''|"[^"\\\n]*(?:\\.[^"\\\n]*)*"|'[^'\\\n]*(?:\\.[^'\\\n]*)*'|["']"""
)


# A line that starts a compound statement (or decorates one): anything else is a simple
# statement (or several, after `;`), which holds no scope but a lambda's.
_COMPOUND_START = re.compile(r"(?:async|if|elif|else|for|while|with|try|except|finally|def|class|match|case)\b|@")


def simple_statement(text: str, block: Block) -> bool:
    """Whether ``block`` (a top-level block or a member of a class body) is a simple statement:
    its line starts no compound statement and no decorator. Its code runs in the scope around
    it (the module's, or the class's), unless it holds a `lambda`."""
    if block.decorated or block.kind in ("def", "class", "head"):
        return False
    return _COMPOUND_START.match(text, block.header + len(block.indent)) is None


def at_own_level(text: str, block: Block, positions, interiors: list[tuple[int, int]], starts: list[int]) -> bool:
    """Whether each of ``positions`` lies in the body of the module-level `def` ``block`` (or
    method of a module-level class) at the function's own level, or outside any function: in
    a logical line of its body, or of the suites of compound statements there (`if`, `for`,
    `while`, `with`, `try` and their clauses, nested as deep as they go), not in a nested `def`
    or `class` (its header, decorators or body) and not after a `lambda` in its own logical
    line (which may hold it); or in its own decorators and signature, which the module or
    class evaluates, with no `lambda` there. A node there belongs to the function's own
    scope, or to no function's: no other function's body holds it.

    The logical lines are read from the text: a line starts one where the brackets opened in
    code since the body began are all closed (strings and comments skipped); the suite a line
    is in is opened by the nearest logical line before it with less indentation. False when
    unsure: a position in the header, a body on the header's line, a backslash continuation,
    a string that does not end on its line, a closing bracket nothing opened, indentation of
    tabs, or a line indented less than the body."""
    if not positions:
        return True
    body = _header_end(text, block.header, block.finish, interiors, starts)
    if body < 0 or max(positions) >= block.finish:
        return False
    if min(positions) < body:
        # In the decorators or the signature: evaluated in the scope around the `def` (its
        # module's or its class's, for a module-level block), no function's, unless in a lambda.
        if "lambda" in text[block.begin : body]:
            return False
        positions = [at for at in positions if at >= body]
        if not positions:
            return True
    lines = _logical_line_starts(text, body, max(positions), interiors, starts)
    if lines is None:
        return False
    # The logical lines with code (blank and comment lines hold no statement), with their indentation.
    statements: list[tuple[int, str]] = []
    blanks = _BLANKS.match
    for start in lines:
        code = blanks(text, start).end()
        if text[code : code + 1] not in ("\n", "#", ""):
            statements.append((start, text[start:code]))
    if not statements or "\t" in statements[0][1]:
        return False
    begins = [start for start, _ in statements]
    return all(_in_own_suite(text, statements, bisect.bisect_right(begins, at) - 1, at) for at in positions)


def _logical_line_starts(text: str, body: int, last: int, interiors: list[tuple[int, int]], starts: list[int]) -> list[int] | None:
    """Where each logical line (or blank or comment line) at bracket depth 0 begins, from ``body``
    up to ``last`` (``at_own_level``'s reading); None when unsure (a closing bracket nothing
    opened, a backslash continuation, a string this reading cannot follow)."""
    lines = [body]  # where each logical line (or blank or comment line) at depth 0 begins
    depth, position, find, search, tricky = 0, body, text.find, _DEPTH_MARKS.search, _QUOTE_HASH_BACKSLASH.search
    while position < last:
        end = find("\n", position, last)
        if end < 0:
            break  # the position's own line: no line begins after it
        code = piece = text[position:end]
        if tricky(piece) is not None and '"""' not in piece and "'''" not in piece and "\\" not in piece:
            # Strings and a comment that end on the line (a quote they leave is unsure).
            code = _SHORT_STRING_OR_COMMENT.sub("", piece)
        if tricky(code) is None:
            # Brackets and code only (most lines, once their strings are out): counted at once.
            depth += code.count("(") + code.count("[") + code.count("{")
            depth -= code.count(")") + code.count("]") + code.count("}")
            if depth < 0:
                return None
            position = end + 1
            if depth == 0:
                lines.append(position)
            continue
        # Strings, comments or a backslash: mark by mark, to the end of the line (a triple-
        # quoted string may carry it over several).
        while True:
            mark = search(text, position, last)
            if mark is None:
                position = last
                break
            position = mark.end()
            found = mark.group()
            char = found[0]
            if char in "([{":
                depth += 1
            elif char in ")]}":
                depth -= 1
                if depth < 0:
                    return None
            elif char == "\n":
                if depth == 0:
                    lines.append(position)
                break
            elif char == "\\" or found in ("'", '"'):
                return None  # a continued line, or a string this reading cannot follow
            elif found in ('"""', "'''"):  # skipped to its end
                inside = bisect.bisect_left(starts, position)
                if inside == len(starts) or starts[inside] != position:
                    return None
                position = interiors[inside][1] + 3
    return lines


def _in_own_suite(text: str, statements: list[tuple[int, str]], index: int, position: int) -> bool:
    """``at_own_level`` for one position in the logical line ``statements[index]`` (the
    body's logical lines with code: (start, indentation))."""
    if index < 0:
        return False
    start, indent = statements[index]
    outer = statements[0][1]  # the body's indentation
    if "\t" in indent or not indent.startswith(outer):
        return False
    header = _HEADER.match(text, start + len(indent))
    if header is not None and header.group(1, 2, 3) != (None, None, None):
        return False  # a nested `def`, `class` or decorator line
    if "lambda" in text[start:position]:
        return False
    # The suites around it, innermost first: each opened by the nearest line indented less.
    while len(indent) > len(outer):
        index -= 1
        while index >= 0 and len(statements[index][1]) >= len(indent):
            index -= 1
        if index < 0:
            return False
        before, around = statements[index]
        if not indent.startswith(around) or _SUITE_HEADER.match(text, before + len(around)) is None:
            return False
        indent = around
    return indent == outer


def class_body_indent(text: str, block: Block, interiors: list[tuple[int, int]], starts: list[int]) -> str | None:
    """The indentation of a `class` block's body, or None when unsure (a body on the
    header's line)."""
    body = _class_body(text, block, interiors, starts)
    return None if body is None else body[1]


def _class_body(text: str, block: Block, interiors: list[tuple[int, int]], starts: list[int]) -> tuple[int, str] | None:
    """(where the first line with code of a `class` block's body begins, its indentation)."""
    position = _header_end(text, block.header, block.finish, interiors, starts)
    if position < 0:
        return None
    finish = block.finish
    while position < finish:  # the body's first line with code gives its indentation
        end = text.find("\n", position, finish)
        end = finish if end < 0 else end
        code = text[position:end].lstrip(" \t")
        if code and code[0] != "#":
            indent = text[position : end - len(code)]
            return (position, indent) if indent else None
        position = end + 1
    return None


_HEADER_MARKS = re.compile(r"""[()\[\]{}#\n'"\\:]""")


def _header_end(text: str, at: int, finish: int, interiors: list[tuple[int, int]], starts: list[int]) -> int:
    """Where the line after a compound statement's header that begins at ``at`` begins: the
    header ends at the first `:` outside brackets, strings and comments, and nothing but a
    comment follows it on its line. -1 when unsure, or when the body is on that line."""
    depth, position = 0, at
    search = _HEADER_MARKS.search
    while position < finish:
        # (From one character that matters here to the next, not through every one.)
        mark = search(text, position, finish)
        if mark is None:
            return -1
        position = mark.start()
        char = text[position]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth < 0:
                return -1
        elif char == "#":
            position = text.find("\n", position, finish)  # a comment inside the brackets
            if position < 0:
                return -1
            continue
        elif char == "\n" and depth == 0:
            return -1  # the statement ends before any colon
        elif char in "'\"":
            if text.startswith(char * 3, position):
                inside = bisect.bisect_left(starts, position + 3)
                if inside == len(starts) or starts[inside] != position + 3:
                    return -1
                position = interiors[inside][1] + 3
                continue
            position = _single_quoted_end(text, position)
            if position < 0:
                return -1
            continue
        elif char == "\\":
            position += 2  # a continued line, or an escape no header holds outside a string
            continue
        elif char == ":" and depth == 0:
            rest = position + 1
            while rest < finish and text[rest] in " \t":
                rest += 1
            if rest < finish and text[rest] == "#":
                rest = text.find("\n", rest, finish)
            if rest < 0 or rest >= finish or text[rest] != "\n":
                return -1
            return rest + 1
        position += 1
    return -1


def _classified(groups: tuple | None, decorated: bool) -> tuple[str | None, str, str | None]:
    """(name, kind, callee) of a statement whose line ``_HEADER`` matched with ``groups``
    (None: no match), the decorated statement's own line when it has decorators."""
    if groups is None or groups[2] is not None:
        return None, "other", None
    if groups[0]:
        return groups[0], "def", None
    if groups[1]:
        return groups[1], "class", None
    if decorated:
        return None, "other", None
    if groups[4] or groups[5]:
        return (groups[4], "assign", None) if groups[4] else (None, "item", None)
    if groups[6]:
        if groups[7].split(".", 1)[0] not in _STATEMENT_KEYWORDS:
            return groups[6], "call", groups[7]
        return None, "other", None
    if (groups[8] or groups[9] or "") not in _STATEMENT_KEYWORDS:
        return None, "item", None
    return None, "other", None


def partial_source(
    text: str, blocks: list[Block], keep: list[bool], replacements: dict[int, str] | None = None
) -> str:
    """``text`` with every block not kept replaced by a stub that binds what it binds at
    module level (`class name: pass` for a `def` or `class`, `name = None` for an "assign",
    `pass` for an "item"; in a class body cut into its members, the same at its indentation
    but `name = None` for a method or a nested class, and `class name:` for the class's own
    header) and blank lines: the kept statements parse to the nodes, lines and columns of the
    whole file's, and the module binds the same names. ``replacements``: the text to put in
    place of some blocks instead (as many lines)."""
    replacements = replacements or {}
    parts = [block_source(text, block, kept, replacements.get(index)) for index, (block, kept) in enumerate(zip(blocks, keep))]
    if blocks:
        parts.insert(0, text[: blocks[0].begin])  # comments and blank lines
    return "".join(parts)


def block_source(text: str, block: Block, kept: bool, replacement: str | None = None) -> str:
    """One block's part of ``partial_source``: its text, ``replacement``, or its stub."""
    if kept:
        return text[block.begin : block.finish]
    if replacement is not None:
        return replacement
    newlines = block.line_breaks(text)
    if block.kind == "head":
        stub = f"class {block.name}:"  # its body follows, kept or stubbed
    elif block.indent:  # a statement of a class body (the analysis reads no name it binds)
        stub = f"{block.indent}pass" if block.kind == "item" else f"{block.indent}{block.name} = None"
    elif block.kind in ("assign", "call"):
        stub = f"{block.name} = None"
    elif block.kind in ("def", "class"):
        stub = f"class {block.name}: pass"
    elif block.kind == "item":
        stub = "pass"
    else:
        raise ValueError(f"a {block.kind} block must be kept")
    return stub + "\n" * newlines


# Single-quoted strings and comments: none holds a line end (a backslash-continued string is
# not matched, and its quote is left behind).
_SHORT_STRING_OR_COMMENT = re.compile(r"""#[^\n]*|"[^"\\\n]*(?:\\.[^"\\\n]*)*"|'[^'\\\n]*(?:\\.[^'\\\n]*)*'""")


_BRACKET_OR_QUOTE = re.compile(r"""[()\[\]{}'"]""")


def brackets_balance(text: str, begin: int, finish: int, interiors: list[tuple[int, int]], starts: list[int]) -> bool:
    """Whether ``text[begin:finish]``, which begins outside any string, opens as many brackets
    of each kind as it closes, counting those in code only (``interiors`` from
    ``string_interiors(text)``, ``starts`` their first offsets). False when unsure: a
    string that does not end on its line."""
    if _BRACKET_OR_QUOTE.search(text, begin, finish) is None:
        return True  # no bracket and no string: most statements of a class body
    parts, position = [], begin
    inside = bisect.bisect_left(starts, begin)
    while inside < len(starts) and starts[inside] < finish:
        parts.append(text[position : starts[inside]])
        position = interiors[inside][1]
        inside += 1
    parts.append(text[position:finish])
    code = _SHORT_STRING_OR_COMMENT.sub("", "".join(parts))
    if "'" in code or '"' in code:
        return False
    return code.count("(") == code.count(")") and code.count("[") == code.count("]") and code.count("{") == code.count("}")


def in_code(text: str, position: int, interiors: list[tuple[int, int]], starts: list[int] | None = None) -> bool:
    """Whether ``position`` is in code, not in a string or comment; ``interiors`` from
    ``string_interiors(text)``, ``starts`` their first offsets (computed when not given). The
    line is read from its start (no string but a triple-quoted one spans lines; such a file
    has ``interiors`` for it)."""
    if starts is None:
        starts = [first for first, _ in interiors]
    inside = bisect.bisect_right(starts, position) - 1
    if inside >= 0 and position <= interiors[inside][1]:
        return False
    cursor = text.rfind("\n", 0, position) + 1
    if inside >= 0 and interiors[inside][1] >= cursor:
        cursor = interiors[inside][1] + 3  # the line starts inside a string that closes on it
    while True:
        lexeme = _LINE_LEXEME.search(text, cursor, position)
        if lexeme is None:
            return True
        at = lexeme.start()
        if text[at] == "#":
            return False
        following = bisect.bisect_right(starts, at + 3) - 1
        if following >= 0 and starts[following] == at + 3:  # a triple-quoted string opens here
            cursor = interiors[following][1] + 3
            continue
        cursor = _single_quoted_end(text, at)
        if cursor < 0 or cursor > position:
            return cursor < 0  # unterminated: unsure, so call it code
