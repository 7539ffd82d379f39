"""What a rule's ``check`` sees of a file: the ``ast`` tree, name resolution, positions."""

from __future__ import annotations

import ast
import bisect
import io
import keyword
import re
import tokenize
from collections import deque
from collections.abc import Iterator
from functools import cache, cached_property
from itertools import pairwise

from jax_codemod.analysis import names
from jax_codemod.analysis.span import Span

_SUPPRESSION = re.compile(r"#\s*codemod:\s*ignore(?:\[(?P<codes>[^\]]*)\])?", re.IGNORECASE)
# ruff's and flake8's "noqa: CODE[, CODE...]" comment. A bare "noqa" without codes is not honoured: it
# is almost always there for another linter, and must not hide a broken call from codemod. A code is
# letters and digits, or this tool's own prefix `JAX` alone (as `--select JAX`), spelt in capitals so
# that prose after the colon (`jax is fine here`) is not read as a code.
_NOQA_CODE = r"(?:[A-Z]+[0-9]+|(?-i:JAX)(?![A-Za-z0-9]))"
_NOQA = re.compile(rf"#\s*noqa\s*:\s*(?P<codes>{_NOQA_CODE}(?:(?:\s*,\s*|\s+){_NOQA_CODE})*)", re.IGNORECASE)
_FUNCTION_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
# A line ends where Python's tokenizer ends it: at CRLF, CR or LF, nowhere else. str.splitlines
# also splits at form feed, U+000B-U+001E, U+0085, U+2028 and U+2029, which are ordinary
# characters (whitespace or string content) to the parser: counting with it shifts every later
# line number and column away from the ast's.
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def split_lines(text: str) -> list[str]:
    """``text``'s lines with their endings, numbered as ``ast`` and ``tokenize`` number them."""
    return _LINE.findall(text)


def count_line_breaks(text: str, start: int = 0, end: int | None = None) -> int:
    """How many lines end in ``text[start:end]`` (a CRLF counts once), as the tokenizer counts.

    A drop-in for ``text.count("\n", start, end)`` that also counts CR-only endings; neither
    bound may fall between the CR and LF of one CRLF.
    """
    end = len(text) if end is None else end
    breaks, returns = text.count("\n", start, end), text.count("\r", start, end)
    return breaks + returns - text.count("\r\n", start, end) if returns else breaks  # no CR: no CRLF either


# Fields of statements (and of except handlers and match cases) that hold statements.
_BODY_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """``list(ast.iter_child_nodes(node))``, without its two generator layers per node (the
    parent maps and JAX001's walks call it for every node of the trees they read)."""
    children = []
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, ast.AST):
            children.append(value)
        elif isinstance(value, list):
            children.extend(item for item in value if isinstance(item, ast.AST))
    return children


def _parent_map(statement: ast.AST, module: ast.AST | None) -> dict[ast.AST, ast.AST]:
    """Child -> parent under ``statement`` (whose own parent is ``module``, unless None): the
    map ``ast.walk`` plus ``iter_child_nodes`` build, in the same order, one pass instead of two."""
    parents: dict[ast.AST, ast.AST] = {} if module is None else {statement: module}
    todo = deque([statement])
    while todo:
        node = todo.popleft()
        for child in child_nodes(node):
            parents[child] = node
            todo.append(child)
    return parents


# Classes whose instances the parser shares across the whole tree (``Load``, ``Add``, ...):
# they have no one parent, and no position to be found by.
_SHARED = (ast.expr_context, ast.boolop, ast.operator, ast.unaryop, ast.cmpop)


def _expand(statement: ast.AST, parents: dict[ast.AST, ast.AST]) -> list[ast.stmt]:
    """Put child -> parent in ``parents`` for every node under ``statement`` but those inside
    the statements it holds, and return those statements (mapped, not entered): the part of
    the tree one statement adds. The shared leaves (``_SHARED``) are left out."""
    nested: list[ast.stmt] = []
    todo = [statement]
    stmt, node_class, shared = ast.stmt, ast.AST, _SHARED
    while todo:
        node = todo.pop()
        for name in node._fields:
            value = getattr(node, name, None)
            if value.__class__ is list:
                for item in value:
                    if isinstance(item, stmt):
                        parents[item] = node
                        nested.append(item)
                    elif isinstance(item, node_class) and not isinstance(item, shared):
                        parents[item] = node
                        todo.append(item)
            elif isinstance(value, node_class) and not isinstance(value, shared):
                parents[value] = node
                todo.append(value)
    return nested


def _level(statements: list[ast.stmt]) -> tuple[list[int], list[ast.stmt]]:
    """``statements`` ordered by (first line, decorators included; last line), with those first
    lines: siblings in the source never overlap but on a shared line, so the last lines come
    in order too, which ``_find``'s walk back from a line relies on to stop. Statements
    without positions (made by hand) give an empty level: nothing is found through it."""
    keyed = []
    for statement in statements:
        start, end = getattr(statement, "lineno", None), getattr(statement, "end_lineno", None)
        if start.__class__ is not int or end.__class__ is not int:
            return [], []
        for decorator in getattr(statement, "decorator_list", None) or ():
            line = getattr(decorator, "lineno", None)
            if line.__class__ is not int:
                return [], []
            start = min(start, line)
        keyed.append((start, end, statement))
    keyed.sort(key=lambda entry: (entry[0], entry[1]))  # stable: already in order, as parsed
    return [start for start, _, _ in keyed], [statement for _, _, statement in keyed]


_WORD = re.compile(r"\w")


def _import_statements(body: list[ast.stmt], text: str) -> Iterator[ast.stmt]:
    """The statements under ``body`` that may be imports: those on a line with the word ``import``.

    Walking every nested statement to find the few imports took 0.22 s CPU over the 1,274
    files of jax+flax+optax+equinox+chex+orbax (this: 0.08 s). Any import lies within the line range of each statement around it, so a
    compound statement whose lines hold no ``import`` word is skipped whole. Lines are
    counted as the parser counts them only without lone carriage returns; with one, walk all.
    """
    if "\r" in text:
        yield from statements(body)
        return
    lines: list[int] = []
    line, counted = 1, 0
    found = text.find("import")
    while found >= 0:
        # str.find, not a regex: ``\bimport\b`` took 0.36 s on those files, ``find`` ~0.01 s.
        end = found + 6
        if not (found and _WORD.match(text, found - 1)) and not _WORD.match(text, end):
            line += text.count("\n", counted, found)
            counted = found
            if not lines or lines[-1] != line:
                lines.append(line)
        found = text.find("import", end)
    if not lines:
        return
    stack: list[ast.AST] = list(reversed(body))
    while stack:
        statement = stack.pop()
        start = getattr(statement, "lineno", None)  # match_case has no position: look inside
        if start is not None:
            first = bisect.bisect_left(lines, start)
            if first == len(lines) or lines[first] > (statement.end_lineno or start):
                continue
        yield statement
        for name in _BODY_FIELDS:
            children = getattr(statement, name, None)
            if isinstance(children, list):
                stack.extend(reversed(children))


class FileContext:
    """A parsed file plus the cheap analyses every rule needs.

    Names are resolved through the file's imports, so ``jdl.to_dlpack`` after
    ``import jax.dlpack as jdl`` resolves to ``jax.dlpack.to_dlpack``: rules match
    qualified names, never spellings.
    """

    # The line primitives, reachable from every rule through the class it already imports.
    split_lines = staticmethod(split_lines)
    count_line_breaks = staticmethod(count_line_breaks)

    def __init__(self, path: str, text: str, tree: ast.Module | None = None, *, parse=None) -> None:
        """``tree``: the module's ``ast``; or ``parse``, a callable that returns it (and raises
        what ``ast.parse`` raises), called on first use of ``tree``: a rule that can decide a
        file from its text or from some of its blocks never pays for parsing all of it."""
        if tree is None and parse is None:
            raise TypeError("FileContext needs a tree or a parse callable")
        self.path = path
        self.text = text
        if tree is not None:
            self.tree = tree
        else:
            self._parse = parse

    @cached_property
    def tree(self) -> ast.Module:
        """The whole module. Parsed on first use when the context was made with ``parse``."""
        tree = self.__dict__["_parse"]()  # kept on failure: the next use raises the same error
        del self.__dict__["_parse"]
        return tree

    @property
    def has_tree(self) -> bool:
        """Whether the whole module is parsed already (then reading ``tree`` costs nothing)."""
        return "tree" in self.__dict__

    def release(self) -> None:
        """Drop the tree and everything computed from it; the context is unusable afterwards.

        An analysis cached on its context that refers back to it (``ctx.analysis.ctx``) is a
        cycle only the cyclic collector can free, and it walks the whole tree to do so (~0.1 s
        of a cold run over the JAX-heavy bench tree). The engine releases each context when its
        file is done, so reference counting frees the tree at once.
        """
        self.__dict__.clear()

    @cached_property
    def analysis(self):
        """The file's value analysis (``analysis.values.Analysis``), built on first use, once."""
        from jax_codemod.analysis.values import Analysis

        return Analysis(self)

    @cached_property
    def lines(self) -> list[str]:
        return split_lines(self.text)

    # Positions -----------------------------------------------------------------

    def _char_column(self, lineno: int, byte_offset: int) -> int:
        line = self.lines[lineno - 1] if 0 < lineno <= len(self.lines) else ""
        if line.isascii():
            return byte_offset
        return len(line.encode("utf-8")[:byte_offset].decode("utf-8", errors="replace"))

    def span(self, node: ast.AST) -> Span:
        return Span(
            node.lineno,
            self._char_column(node.lineno, node.col_offset),
            node.end_lineno,
            self._char_column(node.end_lineno, node.end_col_offset),
        )

    def source_of(self, node: ast.AST) -> str:
        """``ast.get_source_segment`` over the cached lines: that function splits the whole text
        again on every call, which made messages cost seconds on a large module."""
        end_lineno, end_col = getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None)
        if end_lineno is None or end_col is None:
            return ""
        first, last, lines = node.lineno - 1, end_lineno - 1, self.lines
        if not 0 <= first <= last < len(lines):
            return ""
        try:
            if first == last:
                return lines[first].encode()[node.col_offset : end_col].decode()
            head = lines[first].encode()[node.col_offset :].decode()
            tail = lines[last].encode()[:end_col].decode()
        except UnicodeError:
            return ""
        return "".join([head, *lines[first + 1 : last], tail])

    # Tree navigation -------------------------------------------------------------

    @cached_property
    def _parents(self) -> dict[ast.AST, ast.AST]:
        return _parent_map(self.tree, None)

    def _parents_of(self, node: ast.AST) -> dict[ast.AST, ast.AST]:
        """A parent map that holds ``node`` and its ancestors, built only as far as asked.

        Rules ask for the ancestors of a few nodes per file. A map of the whole tree cost more
        than the rest of their check (JAX002: 10% of a cold run on JAX-heavy code, for 20
        files), and so did one per module-level statement where that statement is the whole
        file (a test module's one ``class FooTest(...):``, ~0.2 s of JAX001's 0.46 s on
        jax's pjit_test.py). So the map grows by statement: finding a node walks down the
        statements whose lines hold its line (a module-level one, then one in its body, ...),
        and maps each of them only down to the statements it holds (``_expand``). Each
        statement is mapped once. A node is where the map says because it was found there (a
        parsed tree gives every node one parent), so the answers are the whole-tree map's; a
        node the lines do not lead to (no position, from another tree, placed by hand) gets
        the whole-tree map, the exact slow answer.
        """
        known = self.__dict__.get("_known_parents")
        if known is None:
            known = self._known_parents = {}
            self._levels = {}
        if node in known:
            return known
        line = getattr(node, "lineno", None)
        if node is self.tree:
            return {}
        if line is None or "_parents" in self.__dict__:
            return self._parents
        tree = self.tree
        level = self._levels.get(tree)
        if level is None:
            level = self._levels[tree] = _level(tree.body)
        if self._find(node, line, level, tree):
            return known
        return self._parents  # not from this tree, or placed by hand: the exact, slow answer

    def _find(self, node: ast.AST, line: int, level, owner: ast.AST | None) -> bool:
        """Whether ``node`` is under one of ``level``'s statements (``_level``), mapping those
        whose lines hold ``line`` until it is in the map; ``owner``: the module, when they are
        its body (their parent is mapped with them; a nested statement's is, with its owner's)."""
        starts, siblings = level
        known, levels = self._known_parents, self._levels
        index = bisect.bisect_right(starts, line) - 1
        # Several statements can share a line (``a = 1; b = f(a)``): try each that reaches it.
        while index >= 0 and siblings[index].end_lineno >= line:
            statement = siblings[index]
            inner = levels.get(statement)
            if inner is None:
                if owner is not None:
                    known[statement] = owner
                inner = levels[statement] = _level(_expand(statement, known))
            if node in known or (inner[1] and self._find(node, line, inner, None)):
                return True
            index -= 1
        return False

    def parent(self, node: ast.AST) -> ast.AST | None:
        return self._parents_of(node).get(node)

    def ancestors(self, node: ast.AST) -> Iterator[ast.AST]:
        parents = self._parents_of(node)
        current = parents.get(node)
        while current is not None:
            yield current
            current = parents.get(current)

    def enclosing_function(self, node: ast.AST) -> ast.AST | None:
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, _FUNCTION_NODES):
                return ancestor
        return None

    def enclosing_statement(self, node: ast.AST) -> ast.stmt | None:
        if isinstance(node, ast.stmt):
            return node
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, ast.stmt):
                return ancestor
        return None

    # Name resolution -------------------------------------------------------------

    @cached_property
    def _bindings(self) -> dict[str, object]:
        return names.module_bindings(self.tree.body, _import_statements(self.tree.body, self.text))

    def qualname(self, node: ast.AST) -> str | None:
        """The dotted name ``node`` refers to through the file's imports alone, as spelled there
        (``jax._src.dlpack.to_dlpack``), or None. ``analysis.qualname`` is the canonical answer
        that also knows scopes and values (``analysis.names``)."""
        return names.imported(node, self._bindings)

    def local_name_for(self, qualified: str) -> str | None:
        """How this file already spells ``qualified`` through its imports, if it can."""
        return names.local_name_for(self._bindings, qualified)

    def is_bound(self, name: str) -> bool:
        return name in self._bindings

    # Suppressions ----------------------------------------------------------------

    @cached_property
    def suppressions(self) -> dict[int, frozenset[str] | None]:
        """Line -> suppressed codes or code prefixes (None: every code).

        From ``# codemod: ignore[JAX005]`` (bare ``# codemod: ignore``: every rule) and
        ``# noqa: JAX005``; several codes in one comment, separated by commas, and prefixes
        (``JAX00``) as in ``--select``.
        """
        lowered = self.text.lower()
        if "codemod" not in lowered and "noqa" not in lowered:
            return {}
        found: dict[int, frozenset[str] | None] = {}
        try:
            tokens = list(tokenize.generate_tokens(io.StringIO(self.text).readline))
        except (tokenize.TokenError, SyntaxError, UnicodeDecodeError):
            # (Python 3.12's C tokenizer raises UnicodeDecodeError for a lone CR before a
            # non-ASCII character; the file's own parse reports what is wrong with it.)
            return {}
        for token in tokens:
            if token.type != tokenize.COMMENT:
                continue
            line = token.start[0]
            for codes in _suppressed_codes(token.string):
                if codes is None:
                    found[line] = None
                elif found.get(line, frozenset()) is not None:
                    found[line] = codes | (found.get(line) or frozenset())
        return found

    def is_suppressed(self, code: str, line: int) -> bool:
        if not self._may_suppress(code):
            return False
        if line not in self.suppressions:
            return False
        codes = self.suppressions[line]
        return codes is None or any(code.startswith(prefix) for prefix in codes)

    def _may_suppress(self, code: str) -> bool:
        """Whether some comment of the file could suppress ``code``, read from the text alone.

        ``suppressions`` tokenizes the whole file (0.18 s for jax's api_test.py, whose
        ``# noqa: F841`` comments are for another linter). A comment is a piece of the text,
        and both patterns start at a ``#`` that cannot occur inside a match again, so each
        match in a comment is also found in the text, its codes a superset (the text's match can
        only run on past the comment's end). No ``# codemod: ignore`` in the text and no code
        in its ``noqa`` matches that is a prefix of ``code``: then no comment suppresses it.
        """
        known = self.__dict__.setdefault("_may_suppress_codes", {})
        answer = known.get(code)
        if answer is None:
            text = self.text
            answer = known[code] = _SUPPRESSION.search(text) is not None or any(
                code.startswith(prefix) for match in _NOQA.finditer(text) for prefix in _codes(match.group("codes"))
            )
        return answer


def _suppressed_codes(comment: str) -> Iterator[frozenset[str] | None]:
    for match in _SUPPRESSION.finditer(comment):
        codes = match.group("codes")
        yield None if codes is None else _codes(codes)
    for match in _NOQA.finditer(comment):
        yield _codes(match.group("codes"))


def _codes(text: str) -> frozenset[str]:
    return frozenset(code.upper() for code in re.split(r"[\s,]+", text) if code)


def statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement under ``body``, nested ones included, in source order, without
    visiting expressions.

    Imports are always statements, and a file has ~10x more expression nodes than statements:
    resolving names never needs the expression part of the tree.
    """
    stack = list(reversed(body))
    while stack:
        statement = stack.pop()
        yield statement
        for name in _BODY_FIELDS:
            children = getattr(statement, name, None)
            if isinstance(children, list):
                stack.extend(reversed(children))


# Top-level blocks ----------------------------------------------------------------------

# A line that may start a top-level statement: code at column 0 (not a comment, not a closing
# bracket); `def`/`class` headers and decorators named.
# (``\n`` first: a literal prefix the regex engine searches fast; ``^`` with MULTILINE tries
# every position.)
_COLUMN_ZERO = re.compile(r"\n(?=[^\s#)\]}])")
_HEADER = re.compile(
    r"(?:async[ \t]+)?def[ \t]+(\w+)|class[ \t]+(\w+)|(@)"
    # Clauses of the compound statement above: no statements of their own.
    r"|(?P<clause>else|elif|except|finally)\b"
    # An assignment of a display, a literal or a builtin container call to one name
    # (`TABLE = {...}`, `data = dict(...)`) or to an item (`data["f32"] = dict(...)`): it binds
    # the name to no module and no transform, like `TABLE = None`.
    r"|(\w+)[ \t]*=(?!=)[ \t]*(?=[\[{\"'0-9]|[rbfuRBFU]{1,2}[\"']|(?:dict|list|tuple|set|frozenset)\()"
    r"|(\w+(?:\[[^\n=]*\])+[ \t]*=(?!=)[ \t]*(?=[\[{\"'0-9]|[rbfuRBFU]{1,2}[\"']|(?:dict|list|tuple|set|frozenset)\())"
    # `name = f(...)`: binds the name to no module; an alias only if `f` is a transform or
    # `partial` (the caller checks the callee).
    r"|(\w+)[ \t]*=(?!=)[ \t]*(?=([\w.]+)[ \t]*\()"
    # A call, a string or an annotation as a statement: binds nothing a module-level
    # reader looks at (the first word is no keyword).
    r"|(?=(\w+)[\w.]*[ \t]*\(|(\w+)[ \t]*:(?!=)|[\"']|[rbfuRBFU]{1,2}[\"'])"
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


def _header_end(text: str, at: int, finish: int, interiors: list[tuple[int, int]], starts: list[int]) -> int:
    """Where the line after a compound statement's header that begins at ``at`` begins: the
    header ends at the first `:` outside brackets, strings and comments, and nothing but a
    comment follows it on its line. -1 when unsure, or when the body is on that line."""
    depth, position = 0, at
    while position < finish:
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


def brackets_balance(text: str, begin: int, finish: int, interiors: list[tuple[int, int]], starts: list[int]) -> bool:
    """Whether ``text[begin:finish]``, which begins outside any string, opens as many brackets
    of each kind as it closes, counting those in code only (``interiors`` from
    ``string_interiors(text)``, ``starts`` their first offsets). False when unsure: a
    string that does not end on its line."""
    if not any(text.find(char, begin, finish) >= 0 for char in "()[]{}'\""):
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
