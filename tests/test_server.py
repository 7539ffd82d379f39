"""``codemod server`` with a real LSP client (pytest-lsp starts it as a subprocess over stdio):
initialize, open, change, diagnostics, code actions applied and the document checked again,
hover, per-file settings, debouncing, notebooks."""

from __future__ import annotations

import asyncio
import sys

import pytest

pytest.importorskip("pygls", reason="the server extra (pygls) is not installed")
pytest_lsp = pytest.importorskip("pytest_lsp", reason="pytest-lsp is not installed")
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from test_cli import BROKEN, FIXED

ASYNC = pytest.mark.asyncio(loop_scope="module")


@pytest_lsp.fixture(scope="module", config=ClientServerConfig(
    server_command=[sys.executable, "-m", "jax_codemod.cli", "server"]))
async def client(lsp_client: LanguageClient, tmp_path_factory):
    root = tmp_path_factory.mktemp("workspace")
    (root / "pyproject.toml").write_text('[tool.codemod]\ntarget-jax-version = ">=0.4.30"\n')
    (root / "legacy").mkdir()
    (root / "legacy" / "pyproject.toml").write_text('[tool.codemod]\ntarget-jax-version = "<0.7"\n')
    (root / "quiet").mkdir()
    (root / "quiet" / "pyproject.toml").write_text('[tool.codemod.per-file-ignores]\n"skip_*.py" = ["JAX005"]\n')
    lsp_client.root = root
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"), root_uri=root.as_uri()))
    yield
    await lsp_client.shutdown_session()


async def diagnostics_after(client: LanguageClient, uri: str, action) -> list[types.Diagnostic]:
    """Do ``action`` and return the diagnostics the server then publishes for ``uri``."""
    client.diagnostics.pop(uri, None)
    action()
    for _ in range(200):
        if uri in client.diagnostics:
            return list(client.diagnostics[uri])
        await asyncio.sleep(0.05)
    raise AssertionError(f"no diagnostics for {uri}")


def open_document(client: LanguageClient, name: str, text: str, version: int = 1) -> str:
    uri = (client.root / name).as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri, language_id="python", version=version, text=text)))
    return uri


def change(client: LanguageClient, uri: str, text: str, version: int) -> None:
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))


def applied(text: str, edit: types.WorkspaceEdit, uri: str) -> str:
    (only,) = edit.changes[uri]
    lines = text.split("\n")
    assert (only.range.start.line, only.range.start.character) == (0, 0)
    assert only.range.end.line == len(lines) - 1
    return only.new_text


async def actions(client: LanguageClient, uri: str, diagnostics, only=None) -> list[types.CodeAction]:
    return await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=diagnostics[0].range if diagnostics else types.Range(start=types.Position(line=0, character=0),
                                                                   end=types.Position(line=0, character=0)),
        context=types.CodeActionContext(diagnostics=list(diagnostics), only=only)))


@ASYNC
async def test_a_removed_call_is_a_diagnostic_and_its_quick_fix_removes_it(client):
    text = BROKEN.decode()
    uri = (client.root / "broken.py").as_uri()
    found = await diagnostics_after(client, uri, lambda: open_document(client, "broken.py", text))
    (diagnostic,) = found
    assert diagnostic.code == "JAX005" and diagnostic.source == "codemod"
    assert "jax.dlpack.to_dlpack" in diagnostic.message
    assert diagnostic.range.start.line == 3  # 0-based: the file's line 4
    offered = await actions(client, uri, found)
    fix = next(action for action in offered if action.title.startswith("Fix JAX005"))
    assert fix.kind == types.CodeActionKind.QuickFix and fix.is_preferred
    new = applied(text, fix.edit, uri)
    assert new == FIXED.decode()
    # The edit applied, the document is checked again: nothing left.
    assert await diagnostics_after(client, uri, lambda: change(client, uri, new, 2)) == []


@ASYNC
async def test_hover_on_a_diagnostic_explains_the_rule(client):
    text = BROKEN.decode()
    uri = (client.root / "hover.py").as_uri()
    (diagnostic,) = await diagnostics_after(client, uri, lambda: open_document(client, "hover.py", text))
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=diagnostic.range.start))
    assert hover is not None and "# JAX005 removed-dlpack-api" in hover.contents.value
    assert "## Use instead" in hover.contents.value
    elsewhere = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=0, character=0)))
    assert elsewhere is None


@ASYNC
async def test_fix_all_and_noqa_actions(client):
    text = BROKEN.decode() + "u = torch.from_dlpack(jax.dlpack.to_dlpack(y))\n"
    uri = (client.root / "two.py").as_uri()
    found = await diagnostics_after(client, uri, lambda: open_document(client, "two.py", text))
    assert [d.range.start.line for d in found] == [3, 4]
    # One finding's fix leaves the other finding of the same rule alone.
    (fix,) = [a for a in await actions(client, uri, found[:1]) if a.title.startswith("Fix JAX005")]
    one = applied(text, fix.edit, uri)
    assert "torch.from_dlpack(x)\n" in one and "to_dlpack(y)" in one
    # Fix all, as an editor asks on save (only: source.fixAll).
    (every,) = await actions(client, uri, [], only=["source.fixAll.codemod"])
    assert every.kind == "source.fixAll.codemod" and "to_dlpack" not in applied(text, every.edit, uri)
    (noqa,) = [a for a in await actions(client, uri, found[1:]) if a.title.startswith("Disable JAX005")]
    silenced = applied(text, noqa.edit, uri)
    assert silenced.endswith("to_dlpack(y))  # noqa: JAX005\n")
    after = await diagnostics_after(client, uri, lambda: change(client, uri, silenced, 2))
    assert [d.range.start.line for d in after] == [3]


@ASYNC
async def test_the_settings_are_those_of_codemod_run_for_the_path(client):
    text = BROKEN.decode()
    # A folder whose config targets JAX before 0.7, where to_dlpack still exists: nothing to say.
    uri = (client.root / "legacy" / "old.py").as_uri()
    assert await diagnostics_after(client, uri, lambda: open_document(client, "legacy/old.py", text)) == []
    # per-file-ignores of the governing config.
    uri = (client.root / "quiet" / "skip_me.py").as_uri()
    assert await diagnostics_after(client, uri, lambda: open_document(client, "quiet/skip_me.py", text)) == []
    uri = (client.root / "quiet" / "checked.py").as_uri()
    assert len(await diagnostics_after(client, uri, lambda: open_document(client, "quiet/checked.py", text))) == 1


@ASYNC
async def test_changes_in_quick_succession_are_checked_once(client):
    """Each change cancels the check the one before scheduled: the first publication after a burst
    of changes is already the last text's (a check per keystroke would publish the clean texts
    of the burst first)."""
    uri = (client.root / "typing.py").as_uri()
    await diagnostics_after(client, uri, lambda: open_document(client, "typing.py", "import jax\n"))

    def burst():
        for version in range(2, 12):
            change(client, uri, "import jax\n" + "x = 1\n" * version, version)
        change(client, uri, BROKEN.decode(), 12)

    found = await diagnostics_after(client, uri, burst)
    assert [d.code for d in found] == ["JAX005"]
    await asyncio.sleep(0.6)  # nothing stale arrives later either
    assert list(client.diagnostics[uri]) == found


@ASYNC
async def test_a_saved_module_is_read_again_by_the_documents_that_import_it(client):
    """A document's findings depend on the modules it imports: once one of them is saved with an
    export of what the document hands it, the open document is checked again and shows it
    (the engine forgot what it had read of the project, as a run does at its start)."""
    (client.root / "interop").mkdir()
    (client.root / "interop" / "__init__.py").write_text("from interop.convert import to_torch\n")
    quiet = "import numpy as np\n\n\ndef to_torch(x):\n    return np.asarray(x)\n"
    (client.root / "interop" / "convert.py").write_text(quiet)
    (client.root / "data.py").write_text(
        "import jax\nfrom jax.sharding import NamedSharding\n\n\n"
        "def make_batch(x, sharding: NamedSharding):\n    return jax.device_put(x, sharding)\n")
    caller = "from data import make_batch\nfrom interop import to_torch\n\nt = to_torch(make_batch(1, s))\n"
    uri = (client.root / "caller.py").as_uri()
    assert await diagnostics_after(client, uri, lambda: open_document(client, "caller.py", caller)) == []
    exporting = "import torch\n\n\ndef to_torch(x):\n    return torch.from_dlpack(x)\n"
    helper = open_document(client, "interop/convert.py", quiet)

    def save() -> None:
        (client.root / "interop" / "convert.py").write_text(exporting)
        change(client, helper, exporting, 2)
        client.text_document_did_save(types.DidSaveTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=helper)))

    found = await diagnostics_after(client, uri, save)
    assert [d.code for d in found] == ["JAX002"], found
    # Saved back without the export: the finding goes again.
    def revert() -> None:
        (client.root / "interop" / "convert.py").write_text(quiet)
        change(client, helper, quiet, 3)
        client.text_document_did_save(types.DidSaveTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=helper)))

    assert await diagnostics_after(client, uri, revert) == []


@ASYNC
async def test_a_notebook_is_checked_through_notebook_sync(client):
    notebook_uri = (client.root / "nb.ipynb").as_uri()
    cells = ["import jax\nimport torch\n", "# a cell\nt = torch.from_dlpack(jax.dlpack.to_dlpack(x))\n"]
    cell_uris = [f"{notebook_uri}#cell{index}" for index in range(len(cells))]
    client.diagnostics.pop(cell_uris[1], None)
    client.notebook_document_did_open(types.DidOpenNotebookDocumentParams(
        notebook_document=types.NotebookDocument(uri=notebook_uri, notebook_type="jupyter-notebook", version=1,
                                                 cells=[types.NotebookCell(kind=types.NotebookCellKind.Code,
                                                                           document=uri) for uri in cell_uris]),
        cell_text_documents=[types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
                             for uri, text in zip(cell_uris, cells, strict=True)]))
    for _ in range(200):
        if cell_uris[1] in client.diagnostics:
            break
        await asyncio.sleep(0.05)
    (diagnostic,) = client.diagnostics[cell_uris[1]]
    # Cell coordinates: the second line of the second cell.
    assert diagnostic.code == "JAX005" and diagnostic.range.start.line == 1
    assert list(client.diagnostics.get(cell_uris[0], [])) == []
    # Hover and the line's noqa work on the cell, in its own lines.
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=cell_uris[1]), position=diagnostic.range.start))
    assert hover is not None and "# JAX005" in hover.contents.value
    (noqa,) = await actions(client, cell_uris[1], [diagnostic])
    assert applied(cells[1], noqa.edit, cell_uris[1]).endswith("to_dlpack(x))  # noqa: JAX005\n")


def test_without_the_extra_the_command_says_what_to_install():
    import subprocess

    code = ("import sys; sys.modules['pygls'] = None; sys.modules['pygls.lsp.server'] = None\n"
            "from jax_codemod.cli.main import main; sys.exit(main(['server']))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 2 and "pip install 'jax-codemod[server]'" in done.stderr
    assert "Traceback" not in done.stderr
