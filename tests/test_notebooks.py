"""Notebooks (.ipynb) as ruff does them: code cells checked as one module, IPython syntax masked,
findings named by cell, fixes written back changing nothing but the changed cells' sources.

Snapshot inputs: tests/snapshots/notebooks/<kind>_<name>.ipynb (rewrite_*: codemod fixes it;
noop_*: it must stay byte-identical); each snapshot is the per-cell diff ``--dry-run`` shows.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest
from jax_codemod.cli.main import EXIT_ATTENTION, EXIT_OK, EXIT_USAGE
from jax_codemod.engine import notebook
from jax_codemod.engine.pipeline import Settings, process_source
from jax_codemod.registry import MANIFEST, LazyRule
from test_ci import SARIF_SCHEMA
from test_cli import REPO, invoke
from test_ux import write

NOTEBOOKS = sorted((REPO / "tests" / "snapshots" / "notebooks").glob("*.ipynb"))
REWRITES = [path for path in NOTEBOOKS if path.name.startswith("rewrite_")]
NOOPS = [path for path in NOTEBOOKS if path.name.startswith("noop_")]
SETTINGS = Settings(rules=tuple(LazyRule(info, {"target-jax-version": "0.7"}) for info in MANIFEST
                                if info.DEFAULT_ENABLED))


def outside_sources(text: str, changed: set[int]) -> list[str]:
    """The notebook's text cut at the ``source`` values of the cells in ``changed``."""
    pieces, last = [], 0
    for number, span in enumerate(notebook._source_spans(text), 1):
        if number in changed:
            pieces.append(text[last:span[0]])
            last = span[1]
    return [*pieces, text[last:]]


@pytest.mark.parametrize("path", REWRITES, ids=lambda p: p.stem)
def test_rewrite_matches_snapshot_and_changes_only_its_cells(path: Path, diff_snapshot):
    raw = path.read_bytes()
    assert raw.count(b"\n") == 0 or b"nbformat" in raw  # a notebook as its editor wrote it
    result = process_source(raw, path.name, SETTINGS)
    assert result.error is None, result.error
    assert result.changed and any(f.applied for f in result.findings)
    assert all(f.cell is not None for f in result.findings)
    diffs = notebook.cell_diffs(path.name, raw, result.fixed)
    assert "".join(diff for _cell, diff in diffs) == diff_snapshot
    # Byte for byte the same outside the changed cells' sources: outputs, metadata, key order,
    # indentation, escapes and the final newline (or its absence).
    changed = {cell for cell, _diff in diffs}
    before, after = raw.decode(), result.fixed.decode()
    assert outside_sources(before, changed) == outside_sources(after, changed)
    # And as JSON: only those cells' `source` differs, in the form the file used.
    old, new = json.loads(before), json.loads(after)
    for number, (cell_before, cell_after) in enumerate(zip(old["cells"], new["cells"], strict=True), 1):
        if number in changed:
            assert type(cell_before["source"]) is type(cell_after["source"])
            cell_before, cell_after = dict(cell_before, source=None), dict(cell_after, source=None)
        assert cell_before == cell_after
    assert dict(old, cells=None) == dict(new, cells=None)
    # The fixed notebook is a no-op for a second run.
    again = process_source(result.fixed, path.name, SETTINGS)
    assert again.error is None and not again.changed


@pytest.mark.parametrize("path", NOOPS, ids=lambda p: p.stem)
def test_noop_notebook_is_untouched(path: Path, tmp_path):
    raw = path.read_bytes()
    result = process_source(raw, path.name, SETTINGS)
    assert result.error is None and not result.changed and not result.findings
    (tmp_path / path.name).write_bytes(raw)
    assert invoke(["run", "--no-cache", path.name], cwd=tmp_path)[0] == EXIT_OK
    assert (tmp_path / path.name).read_bytes() == raw


def test_findings_name_the_cell_in_every_format(tmp_path):
    source = REPO / "tests/snapshots/notebooks/rewrite_magic_cells.ipynb"
    write(tmp_path, {"nb.ipynb": source.read_bytes()})
    code, out, _ = invoke(["run", "--check", "--no-cache", "."], cwd=tmp_path)
    assert code == EXIT_ATTENTION
    lines = sorted(line for line in out.splitlines() if "JAX005" in line)
    assert lines[0].startswith("nb.ipynb:cell 3:3:23: JAX005 ")
    # The statement after `%time` is checked, at its column in the cell.
    assert lines[1].startswith("nb.ipynb:cell 4:2:46: JAX005 ")
    document = json.loads(invoke(["run", "--check", "--no-cache", "--format", "json", "."], cwd=tmp_path)[1])
    assert [(f["cell"], f["line"]) for f in document["findings"]] == [(3, 3), (4, 2)]
    github = invoke(["run", "--check", "--no-cache", "--format", "github", "."], cwd=tmp_path)[1]
    assert "::error file=nb.ipynb,title=JAX005 (cell 3)::cell 3:3:23: JAX005 " in github
    sarif = json.loads(invoke(["run", "--check", "--no-cache", "--format", "sarif", "."], cwd=tmp_path)[1])
    jsonschema.validate(sarif, SARIF_SCHEMA, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
    results = sarif["runs"][0]["results"]
    assert [r["properties"]["cell"] for r in results] == [3, 4]
    assert results[0]["message"]["text"].startswith("cell 3:3:23: ")
    assert "region" not in results[0]["locations"][0]["physicalLocation"]


def test_notebooks_are_found_by_default_and_include_narrows(tmp_path):
    nb = (REPO / "tests/snapshots/notebooks/rewrite_compact.ipynb").read_bytes()
    write(tmp_path, {"a.ipynb": nb, "b.py": "x = 1\n", "c.txt": "y"})
    assert sorted(invoke(["run", "--show-files", "."], cwd=tmp_path)[1].split()) == ["a.ipynb", "b.py"]
    write(tmp_path, {"pyproject.toml": '[tool.codemod]\ninclude = ["*.py"]\n'})
    assert invoke(["run", "--show-files", "."], cwd=tmp_path)[1].split() == ["b.py"]
    write(tmp_path, {"pyproject.toml": '[tool.codemod]\ninclude = ["*.py"]\nextend-include = ["*.ipynb"]\n'})
    assert sorted(invoke(["run", "--show-files", "."], cwd=tmp_path)[1].split()) == ["a.ipynb", "b.py"]
    write(tmp_path, {"pyproject.toml": '[tool.codemod]\ninclude = ["src/*.py"]\n'})
    code, _, err = invoke(["run", "--show-files", "."], cwd=tmp_path)
    assert code == EXIT_USAGE and "patterns match file names" in err


def test_a_fix_run_writes_the_notebook_and_a_dry_run_shows_cells(tmp_path):
    source = (REPO / "tests/snapshots/notebooks/rewrite_with_outputs.ipynb").read_bytes()
    write(tmp_path, {"nb.ipynb": source})
    code, out, _ = invoke(["run", "--dry-run", "--no-cache", "nb.ipynb"], cwd=tmp_path)
    assert code == EXIT_ATTENTION and out.startswith("--- a/nb.ipynb:cell 2\n+++ b/nb.ipynb:cell 2\n")
    # The JSON document's diff is the file's, which git apply takes.
    document = json.loads(invoke(["run", "--dry-run", "--no-cache", "--format", "json", "nb.ipynb"], cwd=tmp_path)[1])
    assert document["diffs"][0]["diff"].startswith("--- a/nb.ipynb\n+++ b/nb.ipynb\n")
    assert invoke(["run", "--no-cache", "nb.ipynb"], cwd=tmp_path)[0] == EXIT_OK
    fixed = (tmp_path / "nb.ipynb").read_bytes()
    assert fixed != source and b"np.from_dlpack(x)" in fixed
    assert invoke(["run", "--check", "--no-cache", "nb.ipynb"], cwd=tmp_path)[0] == EXIT_OK


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"{not json", "cannot read as a notebook: invalid JSON"),
        (b'{"worksheets": [], "nbformat": 3}', "nbformat 3"),
        (b"\xff\xfe", "not UTF-8"),
        (b"[" * 100000 + b"]" * 100000, "cannot read as a notebook"),
    ],
    ids=["json", "nbformat3", "encoding", "deep"],
)
def test_a_bad_notebook_is_a_file_error_not_a_crash(tmp_path, content, says):
    write(tmp_path, {"bad.ipynb": content, "good.py": b"x = 1\n"})
    code, _, err = invoke(["run", "--check", "--no-cache", "."], cwd=tmp_path)
    assert code == EXIT_ATTENTION and says in err and "Traceback" not in err, err[-2000:]
    assert "2 files scanned" in err


def test_a_syntax_error_names_its_cell(tmp_path):
    nb = {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                     "source": ["import jax.dlpack\n"]},
                    {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                     "source": ["x = 1\n", "y = jax.dlpack.to_dlpack(\n"]}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    write(tmp_path, {"nb.ipynb": json.dumps(nb)})
    code, _, err = invoke(["run", "--check", "--no-cache", "nb.ipynb"], cwd=tmp_path)
    assert code == EXIT_ATTENTION and "error: nb.ipynb:cell 2:" in err


def test_cell_boundaries_and_masks_survive_a_fix_that_adds_lines():
    # JAX004 (a TPU target) wraps the export and adds a helper: the cells stay apart.
    nb = {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                     "source": ["import jax\n", "import torch\n", "!nvidia-smi"]},
                    {"cell_type": "markdown", "metadata": {}, "source": ["text"]},
                    {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                     "source": ["def to_torch(x: jax.Array) -> torch.Tensor:\n", "    return torch.from_dlpack(x)"]}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    raw = json.dumps(nb, indent=1).encode()
    settings = Settings(rules=tuple(LazyRule(info, {"target-platforms": "cpu,tpu"}) for info in MANIFEST
                                    if info.CODE == "JAX004"))
    result = process_source(raw, "nb.ipynb", settings)
    assert result.error is None and result.changed, result.error
    fixed = json.loads(result.fixed)
    assert fixed["cells"][1] == nb["cells"][1]
    first, third = ("".join(fixed["cells"][i]["source"]) for i in (0, 2))
    assert "!nvidia-smi" in first and "__codemod" not in first + third
    assert "torch.from_dlpack(ensure_exportable(x))" in third and third.startswith("def to_torch")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_cells_source_renders_back_to_its_own_bytes(path: Path):
    # The writer's style detection: each code cell's source, written back unchanged, is the very
    # text the file has (so a changed cell differs from the original only where its code does).
    parsed = notebook.Notebook.parse(path.read_bytes())
    for cell in parsed.cells:
        old = parsed.text[cell.span[0]:cell.span[1]]
        assert notebook._render_source(cell.source, old, cell.as_list, parsed.text) == old, (path.name, cell.number)


def test_a_changed_cell_keeps_the_bytes_of_its_unchanged_lines():
    # Colab escapes & < > as \u0026...; a fixed cell's other lines keep their escapes, and its new
    # line is escaped the same way: the file's diff is the one line the fix changed.
    raw = (b'{\n "cells": [\n  {\n   "cell_type": "code",\n   "metadata": {},\n   "outputs": [],\n'
           b'   "execution_count": null,\n   "source": [\n    "import jax.dlpack, torch  # a \\u0026 b\\n",\n'
           b'    "t = torch.from_dlpack(jax.dlpack.to_dlpack(x))  # \\u003cx\\u003e\\n",\n    "t"\n   ]\n  }\n ],\n'
           b' "metadata": {},\n "nbformat": 4,\n "nbformat_minor": 5\n}\n')
    result = process_source(raw, "nb.ipynb", SETTINGS)
    assert result.error is None and result.changed
    diff = [line for line in result.diff("nb.ipynb").splitlines() if line[:1] in "+-" and line[:3] not in ("---", "+++")]
    assert diff == ['-    "t = torch.from_dlpack(jax.dlpack.to_dlpack(x))  # \\u003cx\\u003e\\n",',
                    '+    "t = torch.from_dlpack(x)  # \\u003cx\\u003e\\n",']


@pytest.mark.parametrize(("line", "masked"), [
    ("%matplotlib inline", True), ("!ls -la", True), ("files = !ls", True), ("out = %timeit -o f()", True),
    ("jnp.sum?", True), ("timeit -n 5 f()", True), ("pip install jax", True), ("cd ..", True),
    ("x = 5 % 3", False), ("time = 3", False), ("time.sleep(1)", False), ("print('why?')", False),
    ("cd / tmp", False), ("time if ok else other", False), ("# is this a magic?", False), ("env", False),
])
def test_what_is_masked_as_ipython(line, masked):
    assert notebook._is_magic(line + "\n") is masked


def test_a_percent_continuation_inside_brackets_is_python():
    masks: list[str] = []
    source = "y = (a\n     % b)\n%time z = 1\n"
    assert notebook._masked(source, masks, []) == "y = (a\n     % b)\nz = 1  # __codemod_magic_0__\n"
    assert masks == []


def _code_cell(*lines: str) -> dict:
    return {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": list(lines)}


def test_a_cell_whose_first_line_is_indented_runs_as_ipython_runs_it(tmp_path):
    # IPython removes the first line's indentation from every line that starts with it
    # (`leading_indent`): such a cell runs there, so it is checked, not "cannot parse".
    nb = {"cells": [_code_cell("import jax.dlpack\n"),
                    _code_cell(" print('start')\n", "for i in range(2):\n", "     y = jax.dlpack.to_dlpack(x)\n")],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    write(tmp_path, {"nb.ipynb": json.dumps(nb, indent=1)})
    code, out, err = invoke(["run", "--check", "--no-cache", "nb.ipynb"], cwd=tmp_path)
    assert code == EXIT_ATTENTION and "cannot parse" not in err, err
    # Reported at its place in the cell as written: line 3, the column after the five spaces.
    assert "nb.ipynb:cell 2:3:10: JAX005 " in out
    # Its fix is refused (which lines IPython dedents after an edit is not known), loudly, and
    # the notebook is left as it was.
    assert "fix not applied: cell 2 starts indented" in err
    before = (tmp_path / "nb.ipynb").read_bytes()
    code, _, err = invoke(["run", "--no-cache", "--unsafe-fixes", "nb.ipynb"], cwd=tmp_path)
    assert "cell 2 starts indented" in err and (tmp_path / "nb.ipynb").read_bytes() == before


def test_an_indented_cell_without_a_fix_leaves_the_others_fixable(tmp_path):
    nb = {"cells": [_code_cell("import jax.dlpack\n", "import torch.utils.dlpack\n"),
                    _code_cell("  a = 1\n", "  b = a + 1\n"),
                    _code_cell("t = torch.utils.dlpack.from_dlpack(jax.dlpack.to_dlpack(jax.numpy.ones(2)))\n")],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    raw = json.dumps(nb, indent=1).encode()
    result = process_source(raw, "nb.ipynb", SETTINGS)
    assert result.error is None and result.changed, result.error
    fixed = json.loads(result.fixed)
    assert fixed["cells"][1] == nb["cells"][1]  # byte for byte: its indentation kept
    assert "to_dlpack" not in "".join(fixed["cells"][2]["source"])


@pytest.mark.parametrize("magic", ["capture", "time", "timeit", "prun"])
def test_shell_escapes_in_a_transformed_cell_magics_body_are_masked(magic):
    # PhiML's documentation notebooks open with `%%capture` then `!pip install phiml`: IPython runs
    # the body of `%%capture` (`%%time`, `%%timeit`, `%%prun`) through its cleanup, so the escape
    # works there; only the magic's own line was masked, the notebook did not parse and nothing
    # of it was checked (found by driving real repositories, issue 54).
    cell = _code_cell(f"%%{magic}\n", "!pip install phiml\n", "%env XLA_FLAGS=--x\n", "import jax\n")
    nb = {"cells": [cell, _code_cell("y = jax.dlpack.to_dlpack(x)\n")],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    raw = json.dumps(nb, indent=1).encode()
    result = process_source(raw, "nb.ipynb", SETTINGS)
    assert result.error is None and result.changed, result.error
    fixed = json.loads(result.fixed)
    assert fixed["cells"][0] == cell  # the masked lines come back byte for byte
    assert "to_dlpack" not in "".join(fixed["cells"][1]["source"])


def test_a_script_cell_magics_body_is_not_read_as_ipython():
    # `%%python` runs its body as a script in another process: `!ls` is no shell escape there.
    masks: list[str] = []
    assert notebook._masked("%%python\n!ls\n", masks, []).splitlines()[1] == "!ls"


def test_masks_keep_the_module_indented_as_the_cell_runs(tmp_path):
    # A shell escape continued on an indented line (big_vision's PaliGemma notebook) and an
    # indented line in a `%%bash` cell were masked at their own indentation: "unexpected indent",
    # and the whole notebook went unchecked. The masks stand where the statement does.
    masks: list[str] = []
    source = "if True:\n  !git clone --depth=1 \\\n     https://example.com/x x\n"
    assert notebook._masked(source, masks, []) == (
        "if True:\n  pass  # __codemod_mask_0__\n  pass  # __codemod_mask_1__\n")
    assert notebook._masked("%%bash\nfor f in *; do\n  echo $f\ndone\n", masks, []).splitlines()[2] == (
        "pass  # __codemod_mask_4__")
    nb = {"cells": [_code_cell("import jax.dlpack\n"), _code_cell("%%bash\n", "for f in *; do\n", "  echo $f\n", "done\n"),
                    _code_cell(*source.splitlines(keepends=True)), _code_cell("y = jax.dlpack.to_dlpack(x)\n")],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    raw = json.dumps(nb, indent=1).encode()
    result = process_source(raw, "nb.ipynb", SETTINGS)
    assert result.error is None and result.changed, result.error
    fixed = json.loads(result.fixed)
    assert fixed["cells"][:3] == nb["cells"][:3]  # the masked lines come back byte for byte
    assert "to_dlpack" not in "".join(fixed["cells"][3]["source"])


# A notebook beside the package it imports (issue 54) ---------------------------------------------

HELPERS = '''import jax
import jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def make():
    mesh = Mesh(jax.devices()[:4], ("x",))
    return jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("x")))
'''
NOTEBOOK_CELLS = (["import torch\n", "from helpers import make\n"], ["t = torch.from_dlpack(make())\n"])


def _cells_as_script(path: Path) -> str:
    return "".join("".join(cell["source"]) + "\n" for cell in json.loads(path.read_text())["cells"])


def test_a_notebook_gets_the_analysis_of_the_modules_beside_it(tmp_path):
    # A notebook importing the package beside it got no finding where a .py file with the same
    # code got JAX002: notebooks had no project. Jupyter runs a notebook in its folder, so its
    # cells import the modules there as a script's lines do; the fixed cells run, the old raise.
    import subprocess
    import sys

    (tmp_path / "helpers.py").write_text(HELPERS)
    path = tmp_path / "demo.ipynb"
    path.write_text(json.dumps({"cells": [{"cell_type": "code", "execution_count": None, "metadata": {},
                                           "outputs": [], "source": cell} for cell in NOTEBOOK_CELLS],
                                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1))
    original = _cells_as_script(path)
    code, out, _ = invoke(["run", "--no-cache", "--check", str(path)])
    assert code == EXIT_ATTENTION and "JAX002" in out, out
    code, out, _ = invoke(["run", "--no-cache", str(path)])
    fixed = _cells_as_script(path)
    assert "ensure_single_device(make())" in fixed, fixed
    assert invoke(["run", "--no-cache", "--check", str(path)])[0] == EXIT_OK  # a second run is a no-op

    def run(script: str) -> subprocess.CompletedProcess:
        env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=4", "JAX_PLATFORMS": "cpu"}
        return subprocess.run([sys.executable, "-c", script + "\nprint(t.tolist())\n"], cwd=tmp_path, env=env,
                              capture_output=True, text=True, check=False, timeout=300)

    before, after = run(original), run(fixed)
    assert before.returncode != 0 and "BufferError" in before.stderr, before.stderr
    assert after.returncode == 0 and after.stdout.strip() == str([float(n) for n in range(8)]), after.stderr


def test_a_notebooks_finding_follows_the_module_it_imports_in_a_warm_run(tmp_path):
    (tmp_path / "helpers.py").write_text(HELPERS)
    path = tmp_path / "demo.ipynb"
    path.write_text(json.dumps({"cells": [{"cell_type": "code", "execution_count": None, "metadata": {},
                                           "outputs": [], "source": cell} for cell in NOTEBOOK_CELLS],
                                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1))
    cache = ["--cache-dir", str(tmp_path / "cache")]
    assert invoke(["run", "--check", *cache, str(path)])[0] == EXIT_ATTENTION
    (tmp_path / "helpers.py").write_text(HELPERS.replace('jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("x")))',
                                                         "jnp.arange(8.0)"))
    assert invoke(["run", "--check", *cache, str(path)])[0] == EXIT_OK  # not the cached answer
