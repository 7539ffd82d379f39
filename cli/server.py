"""``codemod server``: a language server over stdio (pygls), a thin layer over the engine that
``codemod run`` uses.

Each open document is checked as ``codemod run`` would check the file at its path: the config
that governs that path, its per-file-ignores, the target JAX range and platforms its project
declares (``engine.resolve``), the project's other modules read from disk. The text checked is
the editor's buffer, saved or not. What it offers:

- diagnostics, published as a document opens and changes: one per finding, at its span;
- code actions: the fix of one finding (``quickfix``), every fix of the file
  (``source.fixAll.codemod``), and ``# noqa: CODE`` for the line (``engine/noqa.py``);
- hover on a diagnostic: the rule's ``codemod explain``;
- notebooks through notebook document sync: the code cells are checked as one notebook, and each
  cell's diagnostics are published on the cell.

Work per keystroke is bounded: a change only schedules a check of that document after a pause
(``DEBOUNCE_SECONDS``); a newer change cancels the scheduled one, and a check whose document
changed while it ran publishes nothing (the next one will). Settings are resolved once per
folder and again after a save, not per keystroke.
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass, replace
from urllib.parse import unquote, urlparse

import jax_codemod
from jax_codemod.engine import project
from jax_codemod.engine.config import Config, find_pyproject, load_config
from jax_codemod.engine.noqa import annotate
from jax_codemod.engine.pipeline import FileResult, Settings, process_source
from jax_codemod.engine.resolve import Group, Options, declared_target, ignored_here, prepare, settings_for
from jax_codemod.rule import FixSafety

DEBOUNCE_SECONDS = 0.25
SOURCE = "codemod"
FIX_ALL = "source.fixAll.codemod"


class ServerUnavailable(Exception):
    """pygls or lsprotocol is not installed (the ``server`` extra)."""


def path_of(uri: str) -> str:
    """The file system path of a ``file:`` URI (an unsaved buffer's ``untitled:`` gets a name
    of its own in the working directory, as ``--stdin-filename`` would)."""
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        return unquote(parsed.path)
    return os.path.join(os.getcwd(), os.path.basename(unquote(parsed.path)) or "untitled.py")


@dataclass
class Checked:
    """The last check of one document: the text it read and what the engine made of it."""

    version: int | None
    text: str
    result: FileResult
    settings: Settings


class Engine:
    """The engine as the server uses it: settings per folder, one document's check, its fixes."""

    def __init__(self, options: Options | None = None) -> None:
        self.options = options or Options()
        self._groups: dict[str, Group] = {}

    def forget_settings(self) -> None:
        self._groups.clear()

    def forget_files(self) -> None:
        """Forget what was read from disk: the settings, and every root's modules and the
        answers drawn from them (a run does so at its start). A document's findings depend on
        the other modules of its project (a helper it calls, a base class), whose saved text
        a check must then read again."""
        self.forget_settings()
        project.forget_roots()

    def settings(self, path: str) -> Settings:
        """What ``codemod run`` would check ``path`` with (``_run_stdin``'s chain, per folder)."""
        folder = os.path.dirname(os.path.abspath(path))
        group = self._groups.get(folder)
        if group is None:
            config_path = self.options.config or find_pyproject(folder)
            config = load_config(config_path) if config_path else Config()
            declared = declared_target(path, self.options, config)
            group = self._groups[folder] = prepare(Group([path], config_path, config, self.options, declared),
                                                   self.options)
        return settings_for(group, ignored_here(group, path))

    def check(self, path: str, text: str, settings: Settings) -> FileResult:
        return process_source(text.encode("utf-8"), path, settings)

    def fix_all(self, path: str, text: str, settings: Settings) -> str | None:
        result = self.check(path, text, settings)
        if result.error is not None or not result.changed:
            return None
        return result.fixed.decode("utf-8")

    def fix_one(self, path: str, text: str, settings: Settings, result: FileResult, finding) -> str | None:
        """``text`` with ``finding``'s fix alone. The engine fixes a whole file, rule by rule: the
        rule's other findings are held back with a ``# noqa`` on their lines while it runs, and
        those comments are taken out of the result again."""
        rules = tuple(rule for rule in settings.rules if rule.CODE == finding.code)
        only = replace(settings, rules=rules, unsafe_fixes=finding.fix is FixSafety.UNSAFE or settings.unsafe_fixes)
        others = [f for f in result.findings if f.code == finding.code and f.line != finding.line]
        source = text.encode("utf-8")
        held = annotate(path, source, others) if others else None
        if held is not None and (held.fixed is None or held.refused):
            return None
        masked = held.fixed if held is not None else source
        fixed = process_source(masked, path, only)
        if fixed.error is not None or not fixed.changed:
            return None
        out = fixed.fixed.decode("utf-8")
        if held is None:
            return out
        before, after = text.splitlines(keepends=True), masked.decode("utf-8").splitlines(keepends=True)
        for original, with_comment in zip(before, after, strict=True):
            if original != with_comment:
                if out.count(with_comment) != 1:
                    return None  # the fix touched a held-back line: no single-finding fix to offer
                out = out.replace(with_comment, original)
        return out

    def noqa(self, path: str, text: str, finding) -> str | None:
        done = annotate(path, text.encode("utf-8"), [finding])
        return done.fixed.decode("utf-8") if done.fixed is not None else None


def notebook_json(cells: list[tuple[str, str]]) -> bytes:
    """An nbformat 4 notebook of ``cells`` ((kind, source), kind ``code`` or ``markdown``), as
    the engine reads a notebook file."""
    return json.dumps({
        "cells": [{"cell_type": kind, "metadata": {}, "source": source, **(
            {"execution_count": None, "outputs": []} if kind == "code" else {})} for kind, source in cells],
        "metadata": {"kernelspec": {"name": "python3", "language": "python", "display_name": "Python 3"},
                     "language_info": {"name": "python"}},
        "nbformat": 4, "nbformat_minor": 5,
    }).encode("utf-8")


def serve() -> int:
    """Run the server on stdin and stdout until the client ends it."""
    build_server().start_io()
    return 0


def build_server(engine: Engine | None = None):
    try:
        from lsprotocol import types
        from pygls.lsp.server import LanguageServer
    except ImportError as error:
        raise ServerUnavailable(
            "codemod server needs pygls and lsprotocol: pip install 'jax-codemod[server]'") from error

    engine = engine or Engine()
    server = LanguageServer(
        "codemod", jax_codemod.__version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        notebook_document_sync=types.NotebookDocumentSyncOptions(notebook_selector=[
            types.NotebookDocumentFilterWithCells(
                notebook="jupyter-notebook", cells=[types.NotebookCellLanguage(language="python")])]),
    )
    checked: dict[str, Checked] = {}
    pending: dict[str, asyncio.Task] = {}
    # A notebook cell's URI -> (the notebook's URI, the cell's number in the notebook file).
    cells_of: dict[str, tuple[str, int]] = {}

    def utf16(line: str, column: int) -> int:
        return len(line[:column].encode("utf-16-le")) // 2

    def diagnostic(lines: list[str], finding) -> types.Diagnostic:
        span = finding.span
        start_text = lines[span.start_line - 1] if 0 < span.start_line <= len(lines) else ""
        end_text = lines[span.end_line - 1] if 0 < span.end_line <= len(lines) else ""
        return types.Diagnostic(
            range=types.Range(start=types.Position(line=max(span.start_line - 1, 0),
                                                   character=utf16(start_text, span.start_column)),
                              end=types.Position(line=max(span.end_line - 1, 0),
                                                 character=utf16(end_text, span.end_column))),
            message=finding.message, severity=types.DiagnosticSeverity.Warning, code=finding.code,
            source=SOURCE, data={"fix": finding.fix.value, "line": finding.line, "column": finding.column})

    def error_diagnostic(error) -> types.Diagnostic:
        line = max((error.line or 1) - 1, 0)
        return types.Diagnostic(range=types.Range(start=types.Position(line=line, character=0),
                                                  end=types.Position(line=line + 1, character=0)),
                                message=error.message, severity=types.DiagnosticSeverity.Error, source=SOURCE)

    def check_text(uri: str) -> None:
        document = server.workspace.get_text_document(uri)
        path = path_of(uri)
        settings = engine.settings(path)
        result = engine.check(path, document.source, settings)
        if server.workspace.get_text_document(uri).version != document.version:
            return  # changed while checked: the check already scheduled for the new text publishes
        checked[uri] = Checked(document.version, document.source, result, settings)
        lines = document.source.splitlines()
        found = [diagnostic(lines, f) for f in result.findings]
        if result.error is not None:
            found.append(error_diagnostic(result.error))
        server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=found, version=document.version))

    def check_notebook(uri: str) -> None:
        notebook = server.workspace.get_notebook_document(notebook_uri=uri)
        if notebook is None:
            return
        cells = []
        for index, cell in enumerate(notebook.cells, start=1):
            source = server.workspace.get_text_document(cell.document).source
            kind = "code" if cell.kind == types.NotebookCellKind.Code else "markdown"
            cells.append((kind, source))
            cells_of[cell.document] = (uri, index)
        path = path_of(uri)
        settings = engine.settings(path)
        result = process_source(notebook_json(cells), path, settings)
        per_cell: dict[str, list] = {cell.document: [] for cell in notebook.cells}
        for finding in result.findings:
            if finding.cell and finding.cell <= len(notebook.cells):
                per_cell[notebook.cells[finding.cell - 1].document].append(finding)
        for number, (cell_uri, found) in enumerate(per_cell.items(), start=1):
            text = cells[number - 1][1]
            # Each cell's findings in its own lines: hover and the line's noqa read them there.
            checked[cell_uri] = Checked(None, text, FileResult(path, findings=found), settings)
            server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
                uri=cell_uri, diagnostics=[diagnostic(text.splitlines(), f) for f in found]))

    def schedule(uri: str, run, delay: float = DEBOUNCE_SECONDS) -> None:
        """Check ``uri`` after ``delay`` unless another change comes first (which cancels this)."""
        previous = pending.pop(uri, None)
        if previous is not None:
            previous.cancel()

        async def later() -> None:
            try:
                await asyncio.sleep(delay)
                run(uri)
            except asyncio.CancelledError:
                pass
            except Exception as error:  # noqa: BLE001 - a failed check is a message, never the server's end
                server.window_log_message(types.LogMessageParams(
                    type=types.MessageType.Error, message=f"codemod: checking {uri} failed: {error!r}"))
            finally:
                if pending.get(uri) is task:
                    del pending[uri]

        task = asyncio.get_running_loop().create_task(later())
        pending[uri] = task

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(params: types.DidOpenTextDocumentParams) -> None:
        if params.text_document.uri not in cells_of:
            schedule(params.text_document.uri, check_text, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(params: types.DidChangeTextDocumentParams) -> None:
        if params.text_document.uri not in cells_of:
            schedule(params.text_document.uri, check_text)

    def files_changed(saved: str | None) -> None:
        """A file on disk changed: a config or requirements file (the settings), or a module other
        open documents import (their findings). Everything read from disk is read again, and every
        open document is checked again, as pyright does for its dependents."""
        engine.forget_files()
        for uri in list(checked) + ([saved] if saved and saved not in checked else []):
            if uri in cells_of:
                schedule(cells_of[uri][0], check_notebook, 0)
            elif server.workspace.text_documents.get(uri) is not None:
                schedule(uri, check_text, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(params: types.DidSaveTextDocumentParams) -> None:
        files_changed(params.text_document.uri)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    async def watched_files_changed(params: types.DidChangeWatchedFilesParams) -> None:
        files_changed(None)  # (a client that watches files: a checkout, a formatter's writes)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    async def did_close(params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        task = pending.pop(uri, None)
        if task is not None:
            task.cancel()
        checked.pop(uri, None)
        if uri not in cells_of:
            server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    async def notebook_open(params: types.DidOpenNotebookDocumentParams) -> None:
        for cell in params.notebook_document.cells:
            cells_of[cell.document] = (params.notebook_document.uri, 0)
        schedule(params.notebook_document.uri, check_notebook, 0)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    async def notebook_change(params: types.DidChangeNotebookDocumentParams) -> None:
        structure = params.change.cells.structure if params.change.cells else None
        for cell in (structure.did_open or []) if structure else []:
            cells_of[cell.uri] = (params.notebook_document.uri, 0)
        schedule(params.notebook_document.uri, check_notebook)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    async def notebook_close(params: types.DidCloseNotebookDocumentParams) -> None:
        pending.pop(params.notebook_document.uri, None)
        for cell in params.cell_text_documents:
            cells_of.pop(cell.uri, None)
            server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=cell.uri, diagnostics=[]))

    def current(uri: str) -> Checked | None:
        """The last check of ``uri``, if it read the document's current text."""
        found = checked.get(uri)
        if found is None or found.text != server.workspace.get_text_document(uri).source:
            return None
        return found

    def whole(uri: str, text: str, new: str) -> types.WorkspaceEdit:
        lines = text.split("\n")
        end = types.Position(line=len(lines) - 1, character=utf16(lines[-1], len(lines[-1])))
        edit = types.TextEdit(range=types.Range(start=types.Position(line=0, character=0), end=end), new_text=new)
        return types.WorkspaceEdit(changes={uri: [edit]})

    def finding_for(state: Checked, diag: types.Diagnostic):
        data = diag.data if isinstance(diag.data, dict) else {}
        return next((f for f in state.result.findings if f.code == diag.code and f.line == data.get("line")
                     and f.column == data.get("column")), None)

    def noqa_action(uri: str, state: Checked, diag: types.Diagnostic, path: str) -> list[types.CodeAction]:
        finding = finding_for(state, diag)
        silenced = engine.noqa(path, state.text, finding) if finding is not None else None
        if silenced is None:
            return []
        return [types.CodeAction(title=f"Disable {finding.code} for this line (# noqa: {finding.code})",
                                 kind=types.CodeActionKind.QuickFix, diagnostics=[diag],
                                 edit=whole(uri, state.text, silenced))]

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL]))
    def code_action(params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        state = current(uri)
        if state is None:
            return []
        if uri in cells_of:  # a notebook's cell: its line's noqa (a fix is the notebook's, fix all)
            return [action for diag in params.context.diagnostics if diag.source == SOURCE
                    for action in noqa_action(uri, state, diag, path_of(cells_of[uri][0]) + ".py")]
        path = path_of(uri)
        wanted = params.context.only
        actions = []
        if not wanted or types.CodeActionKind.QuickFix in wanted:
            for diag in params.context.diagnostics:
                finding = finding_for(state, diag) if diag.source == SOURCE else None
                if finding is None:
                    continue
                if finding.fix is not FixSafety.NONE:
                    fixed = engine.fix_one(path, state.text, state.settings, state.result, finding)
                    if fixed is not None:
                        unsafe = " (unsafe)" if finding.fix is FixSafety.UNSAFE else ""
                        actions.append(types.CodeAction(
                            title=f"Fix {finding.code}{unsafe}", kind=types.CodeActionKind.QuickFix,
                            diagnostics=[diag], is_preferred=finding.fix is FixSafety.SAFE,
                            edit=whole(uri, state.text, fixed)))
                actions += noqa_action(uri, state, diag, path)
        if not wanted or any(str(kind).startswith(("source.fixAll", FIX_ALL)) or kind == types.CodeActionKind.Source
                             for kind in wanted):
            fixed = engine.fix_all(path, state.text, state.settings)
            if fixed is not None:
                actions.append(types.CodeAction(title="codemod: fix all", kind=FIX_ALL,
                                                edit=whole(uri, state.text, fixed)))
        return actions

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(params: types.HoverParams) -> types.Hover | None:
        from jax_codemod import docs

        state = checked.get(params.text_document.uri)
        if state is None:
            return None
        line, character = params.position.line + 1, params.position.character
        lines = state.text.splitlines()
        for finding in state.result.findings:
            span = finding.span
            text = lines[line - 1] if 0 < line <= len(lines) else ""
            after_start = (line, character) >= (span.start_line, utf16(text, span.start_column))
            before_end = (line, character) <= (span.end_line, utf16(text, span.end_column))
            if after_start and before_end:
                rule = next(r for r in jax_codemod.RULES if r.CODE == finding.code)
                return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown,
                                                                value=docs.explain(rule)))
        return None

    return server
