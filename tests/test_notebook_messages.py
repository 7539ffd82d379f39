"""A notebook finding's message cites lines as the finding's location does: the cell and the line in
it, not the line of the module the rules read (its cells joined, with a marker line between)."""

from __future__ import annotations

import json

from jax_codemod.engine.notebook import Notebook, _cell_lines
from test_cli import invoke

CELLS = [["import jax\n", "import torch\n", "x = jax.numpy.ones(3)\n"], ["c = jax.dlpack.to_dlpack(x)\n"],
         ["\n", "t = torch.utils.dlpack.from_dlpack(c)\n"]]


def notebook(cells=CELLS) -> bytes:
    return json.dumps({
        "cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}
                  for source in cells],
        "metadata": {"kernelspec": {"name": "python3", "language": "python", "display_name": "Python 3"}},
        "nbformat": 4, "nbformat_minor": 5}, indent=1).encode()


def test_a_message_names_the_cell_and_its_line(tmp_path):
    (tmp_path / "nb.ipynb").write_bytes(notebook())
    code, out, err = invoke(["run", "--check", "--no-cache", "--no-progress", "nb.ipynb"], cwd=tmp_path)
    assert code == 1, err
    assert "nb.ipynb:cell 2:1:5: JAX005" in out
    # The consumer is cell 3's second line (the module's line 8 with the cells' marker lines).
    assert "`torch.utils.dlpack.from_dlpack` (cell 3, line 2)" in out, out
    code, out, _err = invoke(["run", "--check", "--no-cache", "--no-progress", "--format", "json", "nb.ipynb"],
                             cwd=tmp_path)
    (finding,) = json.loads(out)["findings"]
    assert finding["cell"] == 2 and "(cell 3, line 2)" in finding["message"]


def test_only_the_notebooks_own_lines_are_translated():
    book = Notebook.parse(notebook())
    assert book.locate(8) == (3, 2)
    assert _cell_lines(book, "fed by `nb.ipynb` line 8 and (line 5)") == "fed by `nb.ipynb` cell 3, line 2 and (cell 2, line 1)"
    # Another module's line is its own; a line in no cell (a marker) stays as it is; so do other numbers.
    assert _cell_lines(book, "`pkg/io.py` line 8 exports it") == "`pkg/io.py` line 8 exports it"
    assert _cell_lines(book, "line 4 and 0.7 and JAX005") == "line 4 and 0.7 and JAX005"
