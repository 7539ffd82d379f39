"""Receivers the whole-file value analysis never calls tracers, judged without it: from the
file's text and a partial tree of it (a reader that parses only some top-level blocks asks
this before deciding that it needs the whole tree). ``PartialReceivers.never_tracer(expr)``:
True only where ``values.Analysis.is_tracer(expr)`` is False on the whole file."""

from __future__ import annotations

import ast
import bisect

from jax_codemod.analysis.context import brackets_balance, in_code, statements, string_interiors
from jax_codemod.analysis.partial import Cut, is_word_char, word_positions
from jax_codemod.analysis.scopes import BODY_FIELDS
from jax_codemod.analysis.taint import STATIC_ATTRS
from jax_codemod.analysis.tracing import Tracing

# `jax.typeof(x)`: an abstract value, never an array; the value analysis has it as a library
# call that returns an unknown value. The names a module may be imported as for it to be that.
_TYPEOF_MODULES = frozenset({"jax", "jax.core", "jax._src.core"})
# Expressions whose value is a constant, a container, a mapping or a function, whatever
# their parts hold: never a tracer (`np.array([jax.devices()[0]])` reads no array).
_NEVER_TRACERS = (
    ast.Constant, ast.JoinedStr, ast.List, ast.Tuple, ast.Set, ast.Dict,
    ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Lambda,
)


class Undecided(Exception):
    """A question about a partial tree that only the whole file's value analysis answers."""


def holds_tracer(
    tracing: Tracing, receiver: ast.AST, exact: bool | PartialReceivers = True, first: PartialReceivers | None = None
) -> bool:
    """Whether ``receiver`` holds a tracer, by the whole-file value analysis (``exact`` True), or
    for a partial tree (``exact`` False, or the ``PartialReceivers`` of it) only where the
    partial tree shows it holds none; any other question about a partial tree raises
    ``Undecided``. ``first``: the whole file's ``PartialReceivers``, asked before the value
    analysis (its "never a tracer" is the analysis' answer, from the text: `out.aval.sharding`
    in a large test module cost a third of JAX001's time there, evaluating `out`)."""
    if isinstance(receiver, _NEVER_TRACERS):
        return False  # what the value analysis says of any of them
    if exact is True:
        return not (first is not None and first.never_tracer(receiver)) and tracing.is_tracer(receiver)
    if exact is not False and exact.never_tracer(receiver):
        return False
    raise Undecided


def file_receivers(ctx, cuts_class) -> PartialReceivers:
    """The whole file's ``PartialReceivers`` (its text cut as a partial reading cuts it, with
    ``cuts_class``), made once per context: asked before the value analysis (``holds_tracer``'s
    ``first``)."""
    found = ctx.__dict__.get("_file_receivers")
    if found is None:
        # The cut only for an attribute's question (most receivers asked are names): made then.
        found = ctx.__dict__["_file_receivers"] = PartialReceivers(ctx.text, ctx.tree, lambda: Cut.of(ctx.text, cuts_class))
    return found


class PartialReceivers:
    """Receivers the whole-file value analysis never calls tracers, judged from the file's text
    and a partial tree of it (every import statement of the file at its line) without that
    analysis; ``cut``: the text cut into top-level blocks (JAX001's ``_Cut``: ``blocks``,
    ``block_of(position)``, ``string_starts``), which ``_unbound_attribute`` needs.

    - A name every binding of which, anywhere in the file, is an import (`jax` in
      `jax.devices()`): the analysis gives a name the join of what its bindings, parameters
      and the module's names hold, and an import holds a module, a library object, a transform
      or nothing known; narrowing by `isinstance` gives annotation values, never tracers.
    - `B.typeof(...)` where every binding of `B` imports `jax`, `jax.core` or `jax._src.core`.
    - An operator over constants only (`1.0 + 0j`): a constant.
    - `E.aval` (or another of ``STATIC_ATTRS``) where no class of the file can bind that
      attribute (``_unbound_attribute``): the analysis gives an attribute of an array, a
      module or an unknown value no tracer; only a class's fields and attributes may be one.

    Every binding of a name spells it in the code (the text is ASCII or its identifiers are
    spelled as parsed) or inside an f-string's replacement field: an occurrence that is not
    right after a dot, right before one or after `from` must stand on an import line, one per
    name that line's imports bind; one in a string or comment must have no `{` before it in
    its string (no `{` or `}` before it on its line: a line that starts inside a replacement
    field, which Python 3.12 allows, closes it first). Anything else: not judged.
    """

    def __init__(self, text: str, tree: ast.Module, cut=None) -> None:
        # (``cut`` may be a callable that makes it, called once, when a question needs it.)
        self.text, self.tree, self._cut = text, tree, cut
        self._unbound: dict[str, bool] = {}
        self._classes: dict[int, list[tuple[int, int]]] = {}
        self._targets: dict[str, tuple[str | None, ...] | None] = {}
        self._imports: dict[int, list[ast.stmt]] | None = None
        self._statements: list[ast.stmt] = []
        self._interiors: list[tuple[int, int]] = []
        self._plain: bool | None = None

    @property
    def cut(self):
        if callable(self._cut):
            self._cut = self._cut()
        return self._cut

    def never_tracer(self, receiver: ast.AST) -> bool:
        if isinstance(receiver, ast.Name):
            return self.import_targets(receiver.id) is not None
        if isinstance(receiver, ast.Call):
            func = receiver.func
            if isinstance(func, ast.Attribute) and func.attr == "typeof" and isinstance(func.value, ast.Name):
                targets = self.import_targets(func.value.id)
                return bool(targets) and all(target in _TYPEOF_MODULES for target in targets)
            return False
        if isinstance(receiver, ast.Attribute) and receiver.attr in STATIC_ATTRS:
            if receiver.attr not in self._unbound:
                self._unbound[receiver.attr] = self._unbound_attribute(receiver.attr)
            return self._unbound[receiver.attr]
        return _constant_operation(receiver)

    def _ready(self) -> bool:
        """Whether the text's identifiers are spelled as parsed and its strings are known."""
        if self._plain is None:
            # (Imported here: most runs never judge a receiver, and the module is large.)
            from jax_codemod.analysis.values import spelled_as_parsed

            self._plain = spelled_as_parsed(self.text)
            cut = self._cut
            if not self._plain:
                interiors = None
            elif cut is not None and not callable(cut) and cut.text is self.text:
                interiors = cut.interiors  # a reading's cut read these strings of this text already
            else:
                interiors = string_interiors(self.text)
            self._plain = interiors is not None
            self._interiors = interiors or []
        return self._plain

    def _in_a_field(self, position: int, starts: list[int]) -> bool:
        """Whether an occurrence in a string or comment may be in an f-string's replacement
        field: a `{` before it in its triple-quoted string, or a `{` or `}` before it on its line."""
        text, interiors = self.text, self._interiors
        inside = bisect.bisect_right(starts, position) - 1
        if inside >= 0 and position <= interiors[inside][1]:
            return text.find("{", interiors[inside][0], position) != -1
        start = text.rfind("\n", 0, position) + 1
        return text.find("{", start, position) != -1 or text.find("}", start, position) != -1

    def _unbound_attribute(self, attr: str) -> bool:
        """Whether no class of the file can have ``attr`` as a field or attribute, for the value
        analysis: it reads them from a class body's `def attr`, `attr = ...` and `attr: T`
        statements and from methods' `this.attr = ...` / `this.attr: T = ...` statements.

        Each occurrence of the word in the code must be in a module-level block (not a class)
        with no `class` in its code: no class body and no method there; or be read (`x.attr.y`,
        `x.attr(`, `x.attr[`: followed by `.`, `(` or `[`, the parser's look-ahead that makes
        no target, and not after `def` or `class`); or be a name (after a character other than
        a dot on its line, or starting a line that starts outside brackets and continues no
        other) in the body of a `def` block (a function, or a method of a class cut into its
        members), past its header line, and in no class body of that block: after a `class`
        only when starting a statement indented no deeper than every `class` before it.
        Anything else, an occurrence in a possible replacement field, or text not cut into
        blocks: False."""
        cut = self.cut
        if cut is None or not self._ready():
            return False
        text, interiors, blocks = self.text, self._interiors, cut.blocks
        starts = cut.string_starts
        size = len(text)
        for position in word_positions(text, attr):
            if not in_code(text, position, interiors, starts):
                if self._in_a_field(position, starts):
                    return False
                continue
            after = position + len(attr)
            while after < size and text[after] in " \t":
                after += 1
            before = position - 1
            while before >= 0 and text[before] in " \t":
                before -= 1
            keyword = any(
                text.endswith(word, 0, before + 1) and (before < len(word) or not is_word_char(text[before - len(word)]))
                for word in ("def", "class")
            )
            index = cut.block_of(position)
            if index is None:
                return False
            block = blocks[index]
            classes = self._class_lines(index)
            if not block.indent and block.kind not in ("class", "head") and not classes:
                continue  # a module-level statement with no class in it: no class body, no method
            if after < size and text[after] in ".([" and not keyword:
                continue
            if keyword or before < 0 or text[before] == "." or block.kind != "def":
                return False  # a definition of it, an attribute that may be stored, a class body
            line_start = text.rfind("\n", 0, position) + 1
            if line_start <= block.header:
                return False  # on its header's line, or among its decorators
            # A name in a function's body; at a line's start, a statement's (unless the line
            # continues another), which is in no class body its indentation does not enter.
            at_start = text[before] == "\n"
            if at_start and (
                (line_start >= 2 and text[line_start - 2] == "\\")
                or not brackets_balance(text, block.header, line_start, interiors, starts)
            ):
                return False
            earlier = [indent for at, indent in classes if at < position]
            if earlier and (
                not at_start
                or text[line_start:position].strip(" ")
                or any(indent < position - line_start for indent in earlier)
            ):
                return False
        return True

    def _class_lines(self, index: int) -> list[tuple[int, int]]:
        """(position, indentation) of each `class` in a block's code; the indentation is -1 where
        the line has more than spaces before it."""
        found = self._classes.get(index)
        if found is None:
            block, text = self.cut.blocks[index], self.text
            found = []
            position = text.find("class", block.begin, block.finish)
            while position != -1:
                end = position + 5
                if (
                    not is_word_char(text[position - 1])
                    and (end == len(text) or not is_word_char(text[end]))
                    and in_code(text, position, self._interiors, self.cut.string_starts)
                ):
                    line_start = text.rfind("\n", 0, position) + 1
                    found.append((position, -1 if text[line_start:position].strip(" ") else position - line_start))
                position = text.find("class", end, block.finish)
            self._classes[index] = found
        return found

    def import_targets(self, name: str) -> tuple[str | None, ...] | None:
        """What the imports that bind ``name`` import (None for a relative one), when every
        binding of ``name`` in the file is an import; None when one may not be."""
        if name not in self._targets:
            self._targets[name] = self._import_targets(name)
        return self._targets[name]

    def _import_targets(self, name: str) -> tuple[str | None, ...] | None:
        text = self.text
        if not self._ready():
            return None
        imports = self._import_lines()
        interiors = self._interiors
        starts = [first for first, _ in interiors]
        size = len(text)
        unexplained: dict[int, int] = {}
        line, counted = 1, 0
        for position in word_positions(text, name):
            line += text.count("\n", counted, position)
            counted = position
            before = position - 1
            while before >= 0 and text[before] in " \t":
                before -= 1
            if before >= 0 and text[before] == ".":
                continue  # an attribute or a module's part, no name
            after = position + len(name)
            while after < size and text[after] in " \t":
                after += 1
            if after < size and text[after] == ".":
                continue  # a name read (`jax.numpy`), or `import jax.numpy`: a binding the imports give
            if text.endswith("from", 0, before + 1) and (before < 4 or not is_word_char(text[before - 4])):
                continue  # `from jax import`, `yield from jax`, `raise E from jax`: nothing bound
            if not in_code(text, position, interiors, starts):
                if self._in_a_field(position, starts):
                    return None
                continue
            if line not in imports:
                return None
            unexplained[line] = unexplained.get(line, 0) + 1
        targets: list[str | None] = []
        explained: dict[int, int] = {}
        for statement in self._statements:
            for alias in statement.names:
                bound = alias.asname or alias.name.split(".", 1)[0]
                if bound != name:
                    continue
                if isinstance(statement, ast.Import):
                    targets.append(alias.name if alias.asname else bound)
                else:
                    targets.append(None if statement.level or not statement.module else f"{statement.module}.{alias.name}")
                if alias.asname or alias.name == name:  # spelled as the name itself
                    at = alias.end_lineno if alias.asname else alias.lineno
                    explained[at] = explained.get(at, 0) + 1
        if unexplained != explained:
            return None  # a line that binds the name otherwise too (`import os; jax = x`)
        return tuple(targets)

    def _import_lines(self) -> dict[int, list[ast.stmt]]:
        """Line -> the import statements of the tree on it (statements only are walked; of a
        whole file's tree, only those whose lines hold the word `import`)."""
        if self._imports is None:
            lines: dict[int, list[ast.stmt]] = {}
            imports = [s for s in _statements_importing(self.tree, self.text) if isinstance(s, (ast.Import, ast.ImportFrom))]
            for statement in imports:
                for number in range(statement.lineno, statement.end_lineno + 1):
                    lines.setdefault(number, []).append(statement)
            self._imports, self._statements = lines, imports
        return self._imports


def _statements_importing(tree: ast.Module, text: str):
    """``statements(tree.body)`` but for those whose lines hold no word `import` and the ones
    nested in them: every import statement spells the word at one of its lines, so the import
    statements are the same, in the same order. A whole file's tree has thousands of
    statements and a few dozen imports. (Lines counted as the parser counts them: a text with
    a lone `\r` is walked whole.)"""
    if "\r" in text:
        yield from statements(tree.body)
        return
    lines, line, counted = [], 1, 0
    for position in word_positions(text, "import"):
        line += text.count("\n", counted, position)
        counted = position
        if not lines or lines[-1] != line:
            lines.append(line)
    if not lines:
        return
    stack = list(reversed(tree.body))
    while stack:
        statement = stack.pop()
        start = getattr(statement, "lineno", None)  # (a `match`'s cases have no lines: walked)
        if start is not None:
            index = bisect.bisect_left(lines, start)
            if index == len(lines) or lines[index] > statement.end_lineno:
                continue  # no `import` on its lines: neither it nor a statement in it imports
        yield statement
        for name in BODY_FIELDS:
            children = getattr(statement, name, None)
            if isinstance(children, list):
                stack.extend(reversed(children))


def _constant_operation(expr: ast.AST) -> bool:
    """An operator over constants only: the value analysis gives it a constant or nothing."""
    if isinstance(expr, ast.BinOp):
        return _constant_operation(expr.left) and _constant_operation(expr.right)
    if isinstance(expr, ast.UnaryOp):
        return _constant_operation(expr.operand)
    return isinstance(expr, ast.Constant)
