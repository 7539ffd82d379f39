"""What a rule's ``rewrite`` sees: libcst helpers bound to one file."""

from __future__ import annotations

import libcst as cst

from codemods.context import FileContext

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
