"""What a rule's ``rewrite`` sees: libcst helpers bound to one file."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from jax_codemod._lazy import lazy_module
from jax_codemod.analysis.context import FileContext
from jax_codemod.engine.notebook import CELL_END_COMMENT, MASK_COMMENT

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = lazy_module("libcst")  # imported by the first fix, not at start-up

# libcst.codemod pulls in libcst.matchers (~0.3-0.5 s to import); it is imported where a fix
# needs it, so that a rule module importing Fixer costs a run without fixes nothing.


class Fixer:
    """Builds replacement code for one file and collects the imports it needs.

    ``reference`` spells a qualified name the way the file already imports it, and
    otherwise schedules the import once, through libcst's own import helpers.
    """

    def __init__(self, ctx: FileContext) -> None:
        from libcst.codemod import CodemodContext

        self.ctx = ctx
        self._codemod_context = CodemodContext()
        self.state: dict[str, object] = {}

    def reference(self, qualified: str) -> cst.BaseExpression:
        return cst.parse_expression(self.reference_code(qualified))

    def reference_code(self, qualified: str) -> str:
        """Source text for ``qualified``, importing its top-level module when needed."""
        local = self.ctx.local_name_for(qualified)
        if local is not None:
            return local
        head = qualified.split(".", 1)[0]
        self.add_import(head)
        return qualified

    def add_import(self, module: str, obj: str | None = None, asname: str | None = None) -> None:
        from libcst.codemod.visitors import AddImportsVisitor

        AddImportsVisitor.add_needed_import(self._codemod_context, module, obj, asname)

    def remove_unused_import(self, module: str, obj: str | None = None, asname: str | None = None) -> None:
        from libcst.codemod.visitors import RemoveImportsVisitor

        RemoveImportsVisitor.remove_unused_import(self._codemod_context, module, obj, asname)

    def finish(self, module: cst.Module) -> cst.Module:
        """Apply the scheduled import edits."""
        from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor

        context = self._codemod_context
        if context.scratch.get(RemoveImportsVisitor.CONTEXT_KEY):
            module = RemoveImportsVisitor(context).transform_module(module)
        if context.scratch.get(AddImportsVisitor.CONTEXT_KEY):
            added = AddImportsVisitor(context).transform_module(module)
            module = _below_environment_setup(module, _below_prologue(module, added))
        return module


# The module set-up that must run before its imports do (`os.environ["XLA_FLAGS"] = ...` above
# `import jax`): an import or helper inserted above it would run first and defeat it.
_SETUP_PREFIXES = ("os.environ", "os.putenv", "sys.path", "warnings.", "jax.config.update", "jax.config.config")


def _is_environment_setup(statement: cst.CSTNode) -> bool:
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    empty = cst.Module(body=[])
    for small in statement.body:
        if isinstance(small, (cst.Assign, cst.AugAssign)):
            targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
            spelled = [empty.code_for_node(target) for target in targets]
        elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            spelled = [empty.code_for_node(small.value.func)]
        elif isinstance(small, cst.Del):
            spelled = [empty.code_for_node(small.target)]
        else:
            return False
        if not all(code.startswith(_SETUP_PREFIXES) for code in spelled):
            return False
    return True


def _is_mask(statement: cst.CSTNode) -> bool:
    """A notebook's masked line (``engine/notebook.py``): a cell magic, a shell escape, a line of
    a ``%%bash`` cell, as a ``pass`` with its marker."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return False
    comment = statement.trailing_whitespace.comment
    return isinstance(statement.body[0], cst.Pass) and comment is not None and MASK_COMMENT.match(comment.value) is not None


def _prologue_end(body) -> int:
    """How many statements a notebook's module starts with that are masked lines: a first cell's
    ``%%capture`` line, a whole ``%%bash`` cell. Nothing may go above them: a cell magic is its
    cell's first line or no magic, and a ``%%bash`` cell runs no Python (issue 53, hole 15)."""
    index = 0
    while index < len(body) and _is_mask(body[index]):
        index += 1
    return index


def _after_cell_end(statement: cst.CSTNode) -> tuple[list, list]:
    """``statement``'s leading lines cut after the last notebook cell end among them: (the lines
    up to it, which stay in the cell above, the rest)."""
    leading = list(statement.leading_lines)
    cut = 0
    for number, line in enumerate(leading):
        if line.comment is not None and CELL_END_COMMENT.match(line.comment.value):
            cut = number + 1
    return leading[:cut], leading[cut:]


def _below_prologue(before: cst.Module, after: cst.Module) -> cst.Module:
    """``after`` (``before`` with imports added) with the imports libcst put above a notebook's
    leading masked lines moved below them, into the cell's Python (after ``%%capture``), or into
    the next cell where the masked lines are a whole cell (``%%bash``)."""
    masked = _prologue_end(before.body)
    added = len(after.body) - len(before.body)
    body = list(after.body)
    if not masked or added <= 0 or not all(_is_mask(s) for s in body[added:added + masked]):
        return after
    imports, masks, rest = body[:added], body[added:added + masked], body[added + masked:]
    masks[0] = masks[0].with_changes(leading_lines=before.body[0].leading_lines)
    # After the imports that follow the masked lines in their cell, as libcst places its own.
    at = 0
    while at < len(rest) and _is_import(rest[at]) and (at == 0 or not _after_cell_end(rest[at])[0]):
        at += 1
    if at == 0 and rest:
        above, below = _after_cell_end(rest[0])
        imports[0] = imports[0].with_changes(leading_lines=above)
        rest[0] = rest[0].with_changes(leading_lines=below)
    if at < len(rest) and not rest[at].leading_lines:
        rest[at] = rest[at].with_changes(leading_lines=[cst.EmptyLine()])
    return after.with_changes(body=[*masks, *rest[:at], *imports, *rest[at:]])


def _is_import(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body)


def _preamble_end(body) -> int:
    """Where a module's preamble ends: a notebook's leading masked lines, docstring, imports
    (guarded ones too) and the environment set-up among them (``os.environ[...] = ...``,
    ``sys.path``, ``warnings`` filters)."""
    index = _prologue_end(body)
    while index < len(body) and (_is_preamble(body[index], index) or _is_environment_setup(body[index])):
        index += 1
    return index


def _below_environment_setup(before: cst.Module, after: cst.Module) -> cst.Module:
    """``after`` (``before`` with imports added) with the added imports moved below the
    module's environment set-up, when libcst put them above it."""
    old = list(before.body)
    setups = [i for i in range(_preamble_end(old)) if _is_environment_setup(old[i])]
    if not setups:
        return after
    remaining: dict[str, int] = {}
    for statement in old:
        code = before.code_for_node(statement)
        remaining[code] = remaining.get(code, 0) + 1
    body = list(after.body)
    added, kept = [], []
    for statement in body:
        code = after.code_for_node(statement)
        if remaining.get(code):
            remaining[code] -= 1
            kept.append(statement)
        else:
            added.append(statement)
    if any(remaining.values()):
        return after  # an import was extended in place (`from x import a, b`): leave the order be
    first_setup = before.code_for_node(old[setups[0]])
    setup_at = next((i for i, s in enumerate(kept) if after.code_for_node(s) == first_setup), None)
    early = [s for s in added if setup_at is not None and body.index(s) <= body.index(kept[setup_at])]
    if not early:
        return after
    kept_body = [s for s in body if not any(s is e for e in early)]
    end = _preamble_end(kept_body)
    moved = [s.with_changes(leading_lines=[]) for s in early]
    return after.with_changes(body=[*kept_body[:end], *moved, *kept_body[end:]])


def insert_after_preamble(module: cst.Module, source: str) -> cst.Module:
    """Insert a top-level definition after the module's docstring and imports.

    Imports guarded by ``try``/``if`` (optional dependencies) count as imports, and the
    blank lines around the insertion follow PEP 8: two before and after a definition.
    """
    body = list(module.body)
    index = _preamble_end(body)
    helper = cst.parse_statement(reindented(source, module.default_indent))
    following = body[index:]
    if index and index == _prologue_end(body) and following:
        # Right after a notebook's leading masked lines: below the cell end that may close them.
        above, below = _after_cell_end(following[0])
        helper = helper.with_changes(leading_lines=above)
        following[0] = following[0].with_changes(leading_lines=below)
    elif index:
        helper = helper.with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
    if following:
        leading = list(following[0].leading_lines)
        blank = 0
        while blank < len(leading) and leading[blank].comment is None:
            blank += 1
        following[0] = following[0].with_changes(
            leading_lines=[cst.EmptyLine()] * max(0, 2 - blank) + leading
        )
    return module.with_changes(body=[*body[:index], helper, *following])


def reindented(source: str, indent: str) -> str:
    """``source`` (written with four spaces a level) with ``indent`` a level, docstring lines too:
    libcst indents the inserted code's blocks as the module does, but a docstring's continuation
    lines are text and kept four spaces in, under a first line at two."""
    if indent == "    ":
        return source
    lines = []
    for line in source.splitlines(keepends=True):
        stripped = line.lstrip(" ")
        levels, rest = divmod(len(line) - len(stripped), 4)
        lines.append(indent * levels + " " * rest + stripped if stripped.strip() else line)
    return "".join(lines)


def _is_preamble(statement: cst.CSTNode, index: int) -> bool:
    """Docstring, imports, and try/if blocks made of imports: what runs before a module's code."""
    if isinstance(statement, cst.SimpleStatementLine):
        return all(
            isinstance(small, (cst.Import, cst.ImportFrom))
            or (index == 0 and isinstance(small, cst.Expr) and isinstance(small.value, cst.SimpleString))
            for small in statement.body
        )
    if isinstance(statement, (cst.Try, cst.If)):
        return all(
            _is_preamble(inner, 1)
            or (
                isinstance(inner, cst.SimpleStatementLine)
                and all(isinstance(s, cst.Pass) for s in inner.body)
            )
            for inner in _compound_statements(statement)
        )
    return False


def _compound_statements(statement: cst.CSTNode) -> Iterator[cst.CSTNode]:
    yield from statement.body.body
    for handler in getattr(statement, "handlers", ()):
        yield from handler.body.body
    orelse = getattr(statement, "orelse", None)
    if orelse is not None:
        yield from orelse.body.body if isinstance(orelse, cst.Else) else _compound_statements(orelse)
