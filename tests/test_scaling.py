"""Every stage of a run scales linearly on the inputs that made it quadratic (issue 53).

Each family is an adversarial input of size n and 4n, and a stage run on both: the work of 4n
must stay within five times the work of n (linear, with slack; quadratic would be sixteen).
Work is counted, not timed: the Python lines the stage executes (``sys.settrace``, as
``bench/lines.py`` counts them), which are the same on every run. Where the work is inside a
regular expression's C loop (the import scan, the notebook's string pattern), lines say nothing,
so those families are also held to their CPU time, with a floor far below what the quadratic
forms took (12 s and 11 s at these sizes).
"""

from __future__ import annotations

import json
import sys
import time

import pytest
from jax_codemod.analysis import module_text
from jax_codemod.cli.sarif import replacements
from jax_codemod.engine import notebook
from jax_codemod.engine.pipeline import FileResult
from jax_codemod.engine.results import unified_diff
from jax_codemod.engine.splice import line_opcodes, only_own_edits


def work(stage, *args) -> tuple[int, float]:
    """(Python lines executed, CPU seconds) of ``stage(*args)``."""
    lines = 0

    def tracer(frame, event, arg):
        if event != "call":
            return None

        def local(frame, event, arg):
            nonlocal lines
            if event == "line":
                lines += 1
            return local

        return local

    started = time.process_time()
    sys.settrace(tracer)
    try:
        stage(*args)
    finally:
        sys.settrace(None)
    return lines, time.process_time() - started


def _notebook(*cells: object) -> bytes:
    return json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "source": source}
                                 for source in cells], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode()


def _imports(text: str) -> None:
    module_text.imports.cache_clear()
    module_text.imports(text)
    module_text.first_parts(text)
    module_text.first_parts_ascii(text.encode())


def _sarif(n: int):
    source = ("import jax\n" + "y = 1\n" * n + "x = 2\n").encode()
    fixed = ("import jax\nimport torch\n" + "y = 1\n" * n + "x = 3\n").encode()
    return (replacements, FileResult(path="a.py", source=source, fixed=fixed))


def _splice(n: int):
    source = b"\x0cx = 1\n" + b"y = 1\n" * n + b"z\n"
    baseline = b"x = 1\n" + b"y = 1\n" * n + b"z\n"  # libcst drops the form feed
    fixed = b"import a\nx = 1\n" + b"y = 1\n" * n + b"w\n"
    return (only_own_edits, source, baseline, fixed)


def _notebook_write(n: int):
    """A fixed cell whose ``source`` is a list of n repeated lines, rendered back."""
    old = json.dumps(["y = 1\n"] * n + ["x = 2\n"])
    code = "import torch\n" + "y = 1\n" * n + "x = 3\n"
    return (notebook._render_source, code, old, True, old)


def _notebook_read(n: int):
    line = '"' + "\\'" * n + "\n"
    return (notebook.Notebook.parse, _notebook(line + "x = (1,\n 2)\n"))


def _many_cells(n: int):
    book = notebook.Notebook.parse(_notebook(*(["x = 1\n"] * n)))
    return (lambda: [book.locate(line) for line in range(1, 2 * n)],)


def _patch(n: int):
    """--dry-run's and --report's patch of a file of repeated lines, fixed at both ends."""
    before = b"import jax\n" + b"y = 1\n" * n + b"x = 2\n"
    after = b"import jax\nimport torch\n" + b"y = 1\n" * n + b"x = 3\n"
    return (unified_diff, before, after, "a.py")


def _line_diff(n: int):
    a = [f"line {i % 7}" for i in range(n)]
    b = [f"line {(i * 3) % 7}" for i in range(n)]
    return (line_opcodes, a, b)


FAMILIES = {
    # name: (make(n) -> (stage, *args), n, also held to CPU time)
    "import scan: from ....import": (lambda n: (_imports, "from " + "." * n + "import x\n"), 8000, True),
    "import scan: import words on one line": (lambda n: (_imports, "import " * n + "\n"), 4000, True),
    "import scan: unclosed parentheses": (lambda n: (_imports, "from a import (\n" * n), 4000, True),
    "import scan: statements after ';'": (lambda n: (_imports, "x = 1" + "; import a" * n + "\n"), 4000, True),
    "sarif replacements: repeated lines": (_sarif, 1000, False),
    "patch: repeated lines": (_patch, 1000, False),
    "splice: a form feed and repeated lines": (_splice, 1000, False),
    "notebook write: a list source of repeated lines": (_notebook_write, 1000, False),
    "notebook read: a line of escaped quotes": (_notebook_read, 20000, True),
    "notebook positions: many cells": (_many_cells, 1000, False),
    "line diff: few distinct lines, reordered": (_line_diff, 2000, False),
}


@pytest.mark.parametrize("family", list(FAMILIES))
def test_each_stage_scales_linearly(family):
    make, n, timed = FAMILIES[family]
    stage, *args = make(n)
    stage(*args)  # warm: imports and caches are not the stage's work
    small_lines, small_seconds = work(stage, *args)
    stage, *args = make(4 * n)
    large_lines, large_seconds = work(stage, *args)
    assert large_lines <= 5 * max(small_lines, 1), (family, small_lines, large_lines)
    if timed:
        assert large_seconds <= max(8 * small_seconds, 0.25), (family, small_seconds, large_seconds)
