"""What a rule's ``rewrite`` sees: libcst helpers bound to one file."""

from __future__ import annotations

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor

from codemods.context import FileContext


class Fixer:
    """Builds replacement code for one file and collects the imports it needs.

    ``reference`` spells a qualified name the way the file already imports it, and
    otherwise schedules the import once, through libcst's own import helpers.
    """

    def __init__(self, ctx: FileContext) -> None:
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
        AddImportsVisitor.add_needed_import(self._codemod_context, module, obj, asname)

    def remove_unused_import(self, module: str, obj: str | None = None, asname: str | None = None) -> None:
        RemoveImportsVisitor.remove_unused_import(self._codemod_context, module, obj, asname)

    def finish(self, module: cst.Module) -> cst.Module:
        """Apply the scheduled import edits."""
        context = self._codemod_context
        if context.scratch.get(RemoveImportsVisitor.CONTEXT_KEY):
            module = RemoveImportsVisitor(context).transform_module(module)
        if context.scratch.get(AddImportsVisitor.CONTEXT_KEY):
            module = AddImportsVisitor(context).transform_module(module)
        return module
