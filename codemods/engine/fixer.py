"""What a rule's ``rewrite`` sees: libcst helpers bound to one file."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from jax_codemod._lazy import lazy_module
from jax_codemod.analysis.context import FileContext

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
            module = AddImportsVisitor(context).transform_module(module)
        return module


def insert_after_preamble(module: cst.Module, source: str) -> cst.Module:
    """Insert a top-level definition after the module's docstring and imports.

    Imports guarded by ``try``/``if`` (optional dependencies) count as imports, and the
    blank lines around the insertion follow PEP 8: two before and after a definition.
    """
    body = list(module.body)
    index = 0
    while index < len(body) and _is_preamble(body[index], index):
        index += 1
    helper = cst.parse_statement(source)
    if index:
        helper = helper.with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
    following = body[index:]
    if following:
        leading = list(following[0].leading_lines)
        blank = 0
        while blank < len(leading) and leading[blank].comment is None:
            blank += 1
        following[0] = following[0].with_changes(
            leading_lines=[cst.EmptyLine()] * max(0, 2 - blank) + leading
        )
    return module.with_changes(body=[*body[:index], helper, *following])


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
