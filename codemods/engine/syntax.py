"""Check files written for a newer Python than the one running codemod.

Detection runs on the standard library's ``ast``, which knows only the running
interpreter's grammar; libcst's parser knows every grammar up to 3.14. A file that ``ast``
rejects but libcst accepts is re-parsed from a *masked* copy: each construct the running
Python lacks is overwritten, in place and byte for byte the same length, by code it can
parse, so every line, column and UTF-8 offset of the rest of the file is unchanged:

- PEP 695/696 type parameters (``class C[T]``, ``def f[T: int = str]``): blanked;
- PEP 695 ``type X[T] = V``: ``type`` becomes ``_=0;``, the parameters are blanked;
- PEP 654 ``except*`` (on Python 3.10): the star is blanked;
- PEP 701 f-strings (and PEP 750 t-strings) the running Python cannot parse: a list of
  their replacement fields, ``f"a{x!r:>{w}}"`` -> ``[  x,   w, ]``, so calls inside them are
  still seen at their own positions.

Only files the running Python rejects pay for this, and only f-strings it rejects are
rewritten. Fixes are made by libcst on the original text, so they keep the new syntax.
Syntax that cannot be masked without moving code (PEP 758 ``except A, B:``) raises a
SyntaxError that names the Python version the file needs.
"""

from __future__ import annotations

import ast
import re
import sys
import warnings
from dataclasses import dataclass
from functools import cache

RUNNING = f"{sys.version_info.major}.{sys.version_info.minor}"


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


class NeedsNewerPython(SyntaxError):
    """The file is valid Python of a newer version that this interpreter cannot check."""


class _Masker:
    """The file's characters, overwritten in place; each cell keeps its original UTF-8 length."""

    def __init__(self, text: str) -> None:
        self.original = _LINE.findall(text)  # lines as Python's tokenizer and libcst count them
        self.cells: dict[int, list[str]] = {}  # only the lines that change, as lists of characters
        self.needed: set[str] = set()

    def char(self, line: int, column: int) -> str:
        return self.original[line - 1][column]

    def put(self, line: int, column: int, value: str) -> None:
        # ast reports UTF-8 byte offsets: a masked character pads to the original's byte length.
        width = len(self.char(line, column).encode("utf-8", "surrogatepass"))
        self._line(line)[column] = value + " " * (width - len(value.encode("utf-8", "surrogatepass")))

    def restore(self, line: int, column: int) -> None:
        self._line(line)[column] = self.char(line, column)

    def _line(self, line: int) -> list[str]:
        if line not in self.cells:
            self.cells[line] = list(self.original[line - 1])
        return self.cells[line]

    def positions(self, start, end):
        """Every (line, column) from ``start`` (inclusive) to ``end`` (exclusive)."""
        line, column = start
        while (line, column) < end and line <= len(self.original):
            if column >= len(self.original[line - 1]):
                line, column = line + 1, 0
                continue
            yield line, column
            column += 1

    def blank(self, cells, continuation: bool) -> None:
        """Spaces over ``cells``; with ``continuation``, their lines stay joined by backslashes."""
        for line, column in cells:
            char = self.char(line, column)
            if char not in "\r\n":
                self.put(line, column, " ")
            elif continuation and char == "\n" and column > 0:
                before = column - 1 - (column > 1 and self.char(line, column - 1) == "\r")
                self.put(line, before, "\\")

    def text(self) -> str:
        return "".join(
            "".join(self.cells[number]) if number in self.cells else line
            for number, line in enumerate(self.original, 1)
        )


# Rounds of region-by-region masking before the whole file is masked at once.
MAX_ROUNDS = 64
# Lines at column 0 that continue a compound statement rather than start one.
_CONTINUATIONS = re.compile(r"(else|elif|except|finally)\b")


def parse_newer(text: str, path: str, error: SyntaxError) -> ast.Module:
    """``ast`` of ``text``, which the running Python rejected with ``error``; see the module doc.

    libcst costs ~30x ``ast`` per byte, and in practice only a few top-level statements of such
    a file use the new syntax (5% of the bytes of the 24 files of JAX's repository that Python
    3.11 rejects). So each round parses, with libcst, only the top-level statements around the
    line ``ast`` stopped at, masks them, and lets ``ast`` find the next one; the whole file is
    parsed with libcst only when that makes no progress.
    """
    fast = _mask_generics(text, path)
    if fast is not None:
        return fast
    import libcst as cst

    masker = _Masker(text)
    starts = _statement_starts(masker.original)
    done: list[tuple[int, int]] = []
    current = error
    for _ in range(MAX_ROUNDS):
        line = current.lineno
        if line is None or any(first <= line < end for first, end in done):
            break  # the syntax ast stops at is not one this module can mask
        region = _parse_region(cst, masker.original, starts, line, path)
        if region is None:
            break
        (first, end), module = region
        if not _mask_module(cst, masker, module, first - 1):
            break
        done.append((first, end))
        try:
            return _ast(masker.text(), path)
        except SyntaxError as masked_error:
            current = masked_error
    # The whole file at once: slower, and right whatever the regions got wrong.
    try:
        module = parse_cst(text, path)
    except (cst.ParserSyntaxError, RecursionError):
        raise error from None  # not valid Python of any version: the interpreter's message stands
    masker = _Masker(text)
    _mask_module(cst, masker, module, 0)
    try:
        return _ast(masker.text(), path)
    except SyntaxError as masked_error:
        needed = max(masker.needed | {"3.12"}, key=lambda v: tuple(map(int, v.split("."))))
        raise NeedsNewerPython(
            f"not checked: the file uses syntax of Python {needed}+ that Python {RUNNING} "
            f"cannot parse ({error.msg}); run codemod with Python {needed} or newer",
            (path, masked_error.lineno or error.lineno, masked_error.offset or 0, None),
        ) from None


# A `def`/`class` with type parameters, or a `type` alias, at the start of a line: the PEP 695
# syntax that makes most files of JAX's repository need this module under Python 3.11.
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_GENERIC = re.compile(
    rf"[ \t]*(?:(?P<definition>(?:async[ \t]+)?def|class)[ \t]+{_NAME}[ \t]*(?=\[)"
    rf"|(?P<alias>type)[ \t]+(?P<name>{_NAME})[ \t]*(?=\[|=(?!=)))"
)
# One type parameter as the fast path takes it: a name, ``*name`` or ``**name``, or a name with
# a bound made of names, dots, commas, brackets and ``|`` (``T: Callable[..., Any]``,
# ``U: (int, str)``). Anything else (defaults, strings, keywords, lambdas) goes to libcst.
_PARAMETER = re.compile(rf"\s*(?:\*\*?{_NAME}|{_NAME}(?:\s*:(?P<bound>[\w\s.,\[\]()|]+))?)\s*")


def _mask_generics(text: str, path: str) -> ast.Module | None:
    """The tree ``parse_newer`` gives when PEP 695 syntax is all the running Python lacks,
    found without libcst (importing it is ~0.2 s of CPU, paid by each worker of the pool at
    its first such file), or None: then the libcst path runs, as before.

    The masks are ``parse_newer``'s own (``_Masker.blank`` over each type-parameter list,
    ``_=0;`` over ``type``), at the places a line reading finds: a line that starts with a
    ``def``/``class`` header whose name a ``[`` follows, or ``type NAME`` before ``[`` or
    ``=``; each parameter list must be plain (``_PARAMETER``). The answer stands only if the
    masked text parses and each mask is where the tree puts code: a definition starting at
    that header; ``_ = 0`` where ``type`` was, then ``NAME = <one expression>``. Then the
    original has a type-parameter list or alias at each mask (code, not a string), the masks
    are all there are (any left would not parse), and no f-string needs masking (it parses
    in the file, so alone too): the libcst path masks exactly these, so its text, and tree,
    are the same. Only before Python 3.12, where every PEP 695 construct is an error (3.12
    parses some, and the libcst path masks those only in the regions it reads); never with
    ``barry_as_FLUFL``, which lets ``<>`` parse in a file but not alone.
    """
    if sys.version_info >= (3, 12) or "barry_as_FLUFL" in text:
        return None
    masker = _Masker(text)
    lines = masker.original
    expected: list[tuple[str, int, int, str | None]] = []  # what the tree must confirm, and where
    for number, line in enumerate(lines, 1):
        if "[" not in line and "type" not in line:
            continue
        match = _GENERIC.match(line)
        if match is None:
            continue
        alias = match.group("alias") is not None
        keyword = match.start("alias" if alias else "definition")
        column = len(line[:keyword].encode("utf-8", "surrogatepass"))
        expected.append(("alias" if alias else "definition", number, column, match.group("name")))
        if alias:
            for offset, char in enumerate("_=0;"):
                masker.put(number, keyword + offset, char)
            if line[match.end()] != "[":
                continue
        end = _closing_bracket(lines, number, match.end())
        if end is None:
            return None
        parameters = "".join(
            lines[at - 1][match.end() + 1 if at == number else 0 : end[1] - 1 if at == end[0] else None]
            for at in range(number, end[0] + 1)
        )
        if not _plain_parameters(parameters):
            return None
        masker.blank(list(masker.positions((number, match.end()), end)), continuation=True)
    if not expected:
        return None
    try:
        tree = _ast(masker.text(), path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    found: dict[tuple[str, int, int], str | None] = {}
    stack: list[list[ast.stmt]] = [tree.body]
    while stack:
        body = stack.pop()
        for index, node in enumerate(body):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                found[("definition", node.lineno, node.col_offset)] = None
            elif _is_alias_mask(node) and index + 1 < len(body):
                name = _alias_target(body[index + 1], node)
                if name is not None:
                    found[("alias", node.lineno, node.col_offset)] = name
            for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                children = getattr(node, field, None)
                if isinstance(children, list):
                    stack.append(children)
    for kind, line, column, name in expected:
        key = (kind, line, column)
        if key not in found or found[key] != name:
            return None
    return tree


def _plain_parameters(text: str) -> bool:
    """Whether ``text`` (between the brackets) is a non-empty list of ``_PARAMETER``s."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(text):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    last = text[start:]
    if last.strip() or not parts:
        parts.append(last)  # else a trailing comma after at least one parameter
    for part in parts:
        match = _PARAMETER.fullmatch(part)
        if match is None:
            return False
        bound = match.group("bound")
        if bound is not None and not _plain_expression(bound):
            return False
    return True


def _plain_expression(text: str) -> bool:
    try:
        node = ast.parse(f"(\n{text}\n)", mode="eval").body
    except SyntaxError:
        return False
    return not isinstance(node, (ast.NamedExpr, ast.Starred, ast.Yield, ast.YieldFrom, ast.Await))


def _is_alias_mask(node: ast.stmt) -> bool:
    """``_ = 0`` spelled ``_=0``: where a ``type`` keyword was masked."""
    return (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and node.targets[0].id == "_"
        and isinstance(node.value, ast.Constant)
        and type(node.value.value) is int
        and node.value.value == 0
        and (node.end_lineno, node.end_col_offset) == (node.lineno, node.col_offset + 3)
    )


def _alias_target(node: ast.stmt, mask: ast.stmt) -> str | None:
    """The name ``type NAME = value`` binds, if ``node``, right after the mask on its line, is
    ``NAME = <one expression>`` (not a tuple, a star, ``yield`` or ``await``)."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
        return None
    if node.lineno != mask.lineno or node.col_offset <= mask.col_offset:
        return None
    if isinstance(node.value, (ast.Tuple, ast.Starred, ast.Yield, ast.YieldFrom, ast.Await, ast.NamedExpr)):
        return None
    return node.targets[0].id


def _closing_bracket(lines: list[str], line: int, column: int) -> tuple[int, int] | None:
    """Just past the bracket that closes the ``[`` at (``line``, ``column``), or None when a
    string, comment or backslash in between makes reading brackets unsure."""
    depth = 0
    while line <= len(lines):
        text = lines[line - 1]
        while column < len(text):
            char = text[column]
            if char in "([{":
                depth += 1
            elif char in ")]}":
                depth -= 1
                if depth == 0:
                    return (line, column + 1) if char == "]" else None
            elif char in "'\"#\\":
                return None
            column += 1
        line, column = line + 1, 0
    return None


def _ast(text: str, path: str) -> ast.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(text, filename=path)


def _statement_starts(lines: list[str]) -> list[int]:
    """Lines (1-based) that may start a top-level statement: code at column 0, not a continuation.

    A line inside a multi-line string or bracket can look like one; a region cut there does not
    parse, and is widened (and in the end the whole file is used).
    """
    starts = []
    for number, line in enumerate(lines, 1):
        if not line or line[0] in " \t\r\n#)]}\f" or _CONTINUATIONS.match(line):
            continue
        if number > 1 and lines[number - 2].rstrip("\r\n").endswith("\\"):
            continue
        starts.append(number)
    return starts


def _parse_region(cst, lines: list[str], starts: list[int], line: int, path: str):
    """((first, end), libcst module) of whole lines [first, end) around ``line`` that libcst parses."""
    import bisect

    index = bisect.bisect_right(starts, line) - 1  # the last start at or before ``line``
    for widen in (0, 1, 4):
        first = starts[index - widen] if index - widen >= 0 else 1
        after = index + 1 + widen
        end = starts[after] if after < len(starts) else len(lines) + 1
        try:
            return (first, end), parse_cst("".join(lines[first - 1 : end - 1]), path, first - 1)
        except (cst.ParserSyntaxError, RecursionError):
            continue
    return None


def _mask_module(cst, masker: _Masker, module, line_offset: int) -> int:
    """Mask what the running Python cannot parse in ``module`` (lines ``line_offset`` + 1 on)."""
    from libcst.metadata import MetadataWrapper, PositionProvider

    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)

    def span(node):
        where = positions[node]
        return (where.start.line + line_offset, where.start.column), (where.end.line + line_offset, where.end.column)

    masked = 0
    strings = []
    for node in positions:
        if isinstance(node, cst.TypeParameters):
            masker.needed.add("3.13" if any(p.default is not None for p in node.params) else "3.12")
            masker.blank(list(masker.positions(*span(node))), continuation=True)
            masked += 1
        elif isinstance(node, cst.TypeAlias):
            masker.needed.add("3.12")
            (line, column), _ = span(node)
            for offset, char in enumerate("_=0;"):
                masker.put(line, column + offset, char)
            masked += 1
        elif isinstance(node, (cst.FormattedString, getattr(cst, "TemplatedString", ()))):
            strings.append(node)
        elif isinstance(node, cst.ExceptHandler) and isinstance(node.type, cst.Tuple) and not node.type.lpar:
            masker.needed.add("3.14")
        elif isinstance(node, cst.ExceptStarHandler) and sys.version_info < (3, 11):
            masker.needed.add("3.11")  # `except* E:` -> `except  E:`
            (line, column), _ = span(node)
            star = masker.original[line - 1].index("*", column)
            masker.put(line, star, " ")
            masked += 1
    for node in sorted(strings, key=lambda n: span(n)[0]):  # outer strings before the ones inside them
        if isinstance(node, cst.FormattedString) and _parses(module.code_for_node(node)):
            continue
        masker.needed.add("3.14" if not isinstance(node, cst.FormattedString) else "3.12")
        _mask_string(masker, node, span, positions, line_offset)
        masked += 1
    return masked


def _parses(code: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(f"(\n{code}\n)", mode="eval")
        return True
    except SyntaxError:
        return False


def _mask_string(masker: _Masker, node, span, positions, line_offset: int) -> None:
    """``f"a{x!r:>{w}}b"`` -> ``[  x,   w,  ]``: each replacement field's expression, in place."""
    cells = list(masker.positions(*span(node)))
    # The node's span includes its parentheses; the string runs from its prefix to its last quote.
    text = "".join(masker.char(*cell) for cell in cells)
    first = text.index(node.start)
    last = text.rindex(node.end) + len(node.end) - 1
    string = cells[first : last + 1]
    masker.blank(string, continuation=False)  # newlines inside the brackets need no backslash
    for field_node in _fields(node):
        where = positions[field_node.expression]
        start = (where.start.line + line_offset, where.start.column)
        end = (where.end.line + line_offset, where.end.column)
        for cell in masker.positions(start, end):
            masker.restore(*cell)
        after = next((c for c in masker.positions(end, string[-1]) if masker.char(*c) not in " \t\r\n"), None)
        if after is not None:
            masker.put(*after, ",")
    masker.put(*string[0], "[")
    masker.put(*string[-1], "]")


def _fields(parts_owner):
    """Every replacement field of an f/t-string, those nested in format specs included."""
    for part in parts_owner.parts:
        if hasattr(part, "expression"):
            yield part
            yield from _fields(_Parts(part.format_spec or ()))


@dataclass
class _Parts:
    parts: object


# Bounded nesting for libcst's native parser --------------------------------------------------
#
# libcst parses in native code that recurses once per nesting level and has no depth check: on
# the main thread's 8 MiB stack, ~1,500 nested brackets or a ~10,000-term `and` chain (which
# ``ast`` keeps flat and accepts) overflow the stack and the process dies with SIGSEGV, taking
# the whole run down. So no text reaches libcst before ``check_nesting`` has bounded its depth
# with one linear scan of its tokens, and libcst runs on a thread with a large stack, so that
# even an estimate that is off by several times cannot crash the process.

# The most nesting units one expression or block may reach, and what each construct costs: a
# bracket or an indented block NESTING_BRACKET units (so 200 brackets, CPython's own limit), each
# link of a chain that libcst nests (a binary or unary operator, ``and``/``or``/``not``, ``.``, a
# call or subscript, ``if``/``else``, ``lambda``, ``for``/``in``, a string concatenated to the
# one before, an ``elif``) one unit. Measured on the main thread: 1,000 brackets or 3,000 links
# parse, 1,500 brackets or 10,000 links crash; the parse thread has 32 times that stack.
NESTING_LIMIT = 2000
NESTING_BRACKET = 10
NATIVE_STACK_BYTES = 256 * 2**20


class NestingTooDeep(SyntaxError):
    """The file nests deeper than libcst can safely parse: not handed to it."""


_TOKEN_PATTERN = (
    rb"""
    (?P<nl>\r\n|\r|\n)
    | (?P<ws>[ \t\f]+|\\(?:\r\n|\r|\n|\Z))
    | (?P<comment>\#[^\r\n]*)
    | (?P<string>(?P<prefix>[A-Za-z]{0,3})
        (?: '''(?:[^'\\]|\\.|'(?!''))*(?:'''|\Z)
          | \"\"\"(?:[^"\\]|\\.|"(?!""))*(?:\"\"\"|\Z)
          | '(?:[^'\\\r\n]|\\(?:\r\n|.))*'?
          | "(?:[^"\\\r\n]|\\(?:\r\n|.))*"?))
    | (?P<number>\.?[0-9](?:[eE][-+]|[\w.])*)
    | (?P<name>[\w\x80-\xff]+)
    | (?P<open>[(\[{])
    | (?P<close>[)\]}])
    | (?P<sep>[,;]|=(?!=))
    | (?P<op>\*\*=?|//=?|>>=?|<<=?|->|:=|!=|[-+*/%@&|^~<>=]=?|\.|:)
    | (?P<other>.)
    """
)


@cache
def _tokens() -> re.Pattern[bytes]:
    return re.compile(_TOKEN_PATTERN, re.DOTALL | re.VERBOSE)  # compiled on first use: start-up time
# Keywords that make libcst nest the expression around them; the rest (names) are operands.
_LINKS = frozenset({b"and", b"or", b"not", b"if", b"else", b"lambda", b"await", b"for", b"in", b"is", b"async"})
_OPERAND_KEYWORDS = frozenset({b"None", b"True", b"False"})
_KEYWORDS = frozenset(
    {b"and", b"or", b"not", b"if", b"else", b"elif", b"lambda", b"await", b"for", b"in", b"is", b"async",
     b"while", b"with", b"def", b"class", b"return", b"yield", b"from", b"import", b"as", b"try", b"except",
     b"finally", b"raise", b"del", b"pass", b"break", b"continue", b"global", b"nonlocal", b"assert"}
)


def check_nesting(source: bytes | str, path: str, line_offset: int = 0) -> None:
    """Raise NestingTooDeep when ``source`` may nest past NESTING_LIMIT (see above).

    One pass over its tokens (a regular expression, not the tokenizer: linear and ~10x
    faster), keeping per open bracket the links of the chain in progress there: a comma, a
    semicolon or an ``=`` ends a chain (its parts are siblings), as does the end of a logical
    line. The estimate errs high: a chain libcst keeps flat (comparisons) is counted too.
    Brackets inside f-strings count as brackets, since libcst parses the fields.
    """
    data = source.encode("utf-8", "surrogatepass") if isinstance(source, str) else source
    limit = NESTING_LIMIT
    line = 1
    stack: list[int] = []  # for each open bracket, the chain count of the level around it
    running = 0  # sum(stack) + NESTING_BRACKET * len(stack)
    chain = 0
    indents: list[int] = [0]  # indentation widths of the open blocks
    elifs: list[int] = [0]  # per open block, the elif chain at its level
    block = 0  # cost of the open blocks: NESTING_BRACKET and the elif chain per level
    at_line_start = True
    previous = ""  # kind of the last significant token: operand, string, or ""
    for match in _tokens().finditer(data):
        kind = match.lastgroup
        if kind == "ws":
            if match.group().startswith(b"\\"):
                line += 1
            continue
        if kind == "comment":
            continue
        if kind == "nl":
            line += 1
            if not stack:
                chain, previous, at_line_start = 0, "", True
            continue
        if at_line_start:
            at_line_start = False
            start = match.start()
            indent = start - max(data.rfind(b"\n", 0, start), data.rfind(b"\r", 0, start)) - 1
            while len(indents) > 1 and indent < indents[-1]:
                indents.pop()
                block -= NESTING_BRACKET + elifs.pop()
            if indent > indents[-1]:
                indents.append(indent)
                elifs.append(0)
                block += NESTING_BRACKET
            word = match.group()
            if word == b"elif":
                elifs[-1] += 1
                block += 1
            elif word not in (b"else", b"except", b"finally"):
                block -= elifs[-1]
                elifs[-1] = 0
        links = 0
        if kind == "string":
            text = match.group()
            prefix = match.group("prefix").lower()
            if previous == "string":
                links = 1
            if b"f" in prefix or b"t" in prefix:
                # The fields are code libcst parses: their brackets nest like any others.
                depth = deepest = 0
                for char in text[len(prefix):]:
                    if char in b"([{":
                        depth += 1
                        deepest = max(deepest, depth)
                    elif char in b")]}" and depth:
                        depth -= 1
                if block + running + chain + NESTING_BRACKET * deepest > limit:
                    raise _too_deep(path, line + line_offset)
            line += text.count(b"\n") + text.count(b"\r") - text.count(b"\r\n")
            previous = "string"
        elif kind in ("name", "number"):
            word = match.group()
            if word in _LINKS:
                links, previous = 1, ""
            elif word in _KEYWORDS:
                previous = ""
            else:
                previous = "operand"
        elif kind == "open":
            if previous:  # a call or subscript: a link of the chain it ends
                chain += 1
            stack.append(chain)
            running += chain + NESTING_BRACKET
            chain, previous = 0, ""
        elif kind == "close":
            if stack:
                chain = stack.pop()
                running -= chain + NESTING_BRACKET
            previous = "operand"
        elif kind == "sep":
            chain, previous = 0, ""
        elif kind == "op":
            links, previous = 1, ""
        if links:
            chain += links
        if block + running + chain > limit:
            raise _too_deep(path, line + line_offset)


def _too_deep(path: str, line: int) -> NestingTooDeep:
    return NestingTooDeep(
        f"not checked: nesting too deep (limit {NESTING_LIMIT // NESTING_BRACKET} brackets or blocks, "
        f"{NESTING_LIMIT} chained operators)",
        (path, line, 0, None),
    )


def parse_cst(source: bytes | str, path: str = "<unknown>", line_offset: int = 0):
    """``libcst.parse_module(source)``, once ``check_nesting`` has bounded its depth, on a thread
    with a NATIVE_STACK_BYTES stack (reserved address space: only the pages it uses are memory)."""
    import threading

    import libcst as cst

    check_nesting(source, path, line_offset)
    outcome: list = []

    def parse() -> None:
        try:
            outcome.append((True, cst.parse_module(source)))
        except BaseException as error:  # noqa: BLE001 -- re-raised in the caller's thread
            outcome.append((False, error))

    previous = threading.stack_size()
    try:
        threading.stack_size(NATIVE_STACK_BYTES)
        thread = threading.Thread(target=parse, name="codemod-libcst", daemon=True)
        thread.start()  # the stack size is read here, not when the thread object is made
    except (ValueError, RuntimeError):  # no settable stacks (or no memory for one): the check alone bounds it
        return cst.parse_module(source)
    finally:
        threading.stack_size(previous)
    thread.join()
    ok, value = outcome[0]
    if not ok:
        raise value
    return value
