"""The project gate's shared answers (issue 55, fourth round): what is kept once and reused must
be what asking afresh gives.

- ``Root.module_of`` keeps its answers by script folder: checked against a fresh root for every
  (name, importer) pair, in both orders of asking, on a tree where a script's folder shadows a
  package of the root and on the repository's own files (a key shared by more folders, as was
  tried, must keep passing it).
- ``_StatementStarts`` answers a position with only blanks before it on its line without reading
  the line's separators: checked against ``_statement_start`` (the plain reading) at every
  `import` of real files and of generated lines with `;`, `:`, quotes and comments.
- ``_chains`` tests the chains for blanks once, joined: checked against the plain reading.
- ``Reach.reexport`` keeps its answers: the same as a fresh ``Reach``'s.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from jax_codemod.analysis import module_text
from jax_codemod.analysis.module_text import _BYTES_SEPARATORS, _STR_SEPARATORS, _StatementStarts, _statement_start
from jax_codemod.analysis.project import Root

REPO = Path(__file__).resolve().parent.parent
REAL = sorted((REPO / "tests" / "realworld").rglob("*.py")) + sorted((REPO / "codemods").rglob("*.py"))

# A root where `scripts/` shadows the package `pkg` (`scripts/pkg.py`) and `tools/` does not.
SHADOWED = {
    "pkg/__init__.py": "from .core import f\n",
    "pkg/core.py": "def f(x):\n    return x\n",
    "pkg/sub/__init__.py": "",
    "pkg/sub/deep.py": "g = 1\n",
    "scripts/a.py": "import pkg\nfrom pkg.core import f\n",
    "scripts/pkg.py": "f = None\n",
    "scripts/helpers.py": "h = 2\n",
    "tools/b.py": "import pkg\nimport helpers\n",
    "tools/c/d.py": "import pkg.sub.deep\n",
    "top.py": "import pkg\n",
}
NAMES = ["pkg", "pkg.f", "pkg.core", "pkg.core.f", "pkg.sub.deep.g", "pkg.sub", "helpers", "helpers.h", "top", "tools.b",
         "scripts.pkg", "numpy.asarray", "pkg.missing", "c.d"]


def root_of(texts: dict[str, str]) -> Root:
    return Root(lambda: list(texts), lambda path: (texts.get(path), f"digest-{path}"))


@pytest.mark.parametrize("reverse", [False, True])
def test_module_of_shared_across_folders_is_what_each_folder_finds(reverse):
    importers = sorted(SHADOWED, reverse=reverse)
    shared = root_of(SHADOWED)
    for name in NAMES:
        for importer in importers:
            assert shared.module_of(name, importer) == root_of(SHADOWED).module_of(name, importer), (name, importer)
    # The shadowing is seen: the folder that holds `pkg.py` finds it, the others the package.
    assert shared.module_of("pkg", "scripts/a.py")[0] == "scripts/pkg.py"
    assert shared.module_of("pkg", "tools/b.py")[0] == "pkg/__init__.py"
    assert shared.module_of("helpers", "scripts/a.py")[0] == "scripts/helpers.py"
    assert shared.module_of("helpers", "tools/b.py") is None


def test_module_of_shared_on_real_files():
    texts = {str(path.relative_to(REPO)): "" for path in REAL}
    paths = sorted(texts)
    rng = random.Random(55)
    importers = rng.sample(paths, 40)
    names = sorted({".".join(path[:-3].split("/")[: rng.randint(1, 4)]) for path in rng.sample(paths, 60)})
    names += [f"{name}.attribute" for name in names[:20]] + ["realworld", "codemods.analysis", "os.path"]
    shared = root_of(texts)
    for importer in importers:
        for name in names:
            assert shared.module_of(name, importer) == root_of(texts).module_of(name, importer), (name, importer)


def _import_positions(text):
    found, at = [], text.find("import")
    while at != -1:
        found.append(at)
        at = text.find("import", at + 1)
    return found


def _check_starts(text: str) -> None:
    positions = _import_positions(text)
    starts = _StatementStarts(text, _STR_SEPARATORS)
    for position in positions:
        assert starts(position) == _statement_start(text, position, _STR_SEPARATORS), (text, position)
    if text.isascii():
        data = text.encode()
        starts = _StatementStarts(data, _BYTES_SEPARATORS)
        for position in positions:
            assert starts(position) == _statement_start(data, position, _BYTES_SEPARATORS), (text, position)


def test_statement_starts_on_real_files():
    for path in REAL:
        _check_starts(path.read_text(encoding="utf-8", errors="replace"))


PIECES = ["import a", "from .b import c", "  ", "\t", ";", ":", "'", '"', "#", "try", "if x", "\n", "import", "x = 1", "(", ")"]


def test_statement_starts_on_generated_lines():
    rng = random.Random(7)
    for _ in range(20_000):
        _check_starts("".join(rng.choice(PIECES) for _ in range(rng.randint(1, 12))))
    # A line whose first import starts it and whose second follows a separator: the first read
    # leaves the line's separators unread, the second must read them.
    text = "import a; import b\n    import c: import d\nx = 'import'; import e\n"
    _check_starts(text)
    # (As before: a quote before the `;` leaves `import e` unread, `c:` is read as a name.)
    assert module_text.first_parts(text) == [("", "a"), ("", "b"), ("", "c:"), ("", "d")]


def _plain_chains(text: str, alias: str) -> tuple[str, ...]:
    pattern = re.compile(rf"{re.escape(alias)}((?:[ \t]*\.[ \t]*[A-Za-z_]\w*)+)")
    return tuple(sorted({"".join(chain.split()) for chain in pattern.findall(text)}))


@pytest.mark.parametrize("alias", ["wp", "np", "jax", "self", "x"])
def test_chains_as_the_plain_reading(alias):
    for path in REAL:
        text = path.read_text(encoding="utf-8", errors="replace")
        assert module_text._chains(text, alias) == _plain_chains(text, alias), path
    text = "wp . launch(k)\nwp.\tarray(x)\nwp.zeros(3)\nwpx.y\nxwp.z\n"
    assert module_text._chains(text, "wp") == _plain_chains(text, "wp") == (".array", ".launch", ".z", ".zeros")
    # A blank of one kind only: tabs, then spaces.
    assert module_text._chains("wp.\tones(1)\nwp.ones(2)\n", "wp") == (".ones",)
    assert module_text._chains("wp .ones(1)\nwp.ones(2)\n", "wp") == (".ones",)


REEXPORTS = {
    "pkg/__init__.py": "from .core import f, g\nfrom numpy import g\nfrom .core import h as k\ntry:\n    def f2(): pass\nexcept ImportError:\n    pass\nfrom .core import f2\n",
    "pkg/core.py": "def f(x):\n    return x\ndef g(x):\n    return x\ndef h(x):\n    return x\ndef f2(x):\n    return x\n",
    "main.py": "from pkg import f\n",
}


def test_reexport_kept_is_a_fresh_answer():
    shared = root_of(REEXPORTS)
    for _ in range(2):
        for name in ("f", "g", "k", "f2", "missing"):
            assert shared.reexport("pkg/__init__.py", name) == root_of(REEXPORTS).reexport("pkg/__init__.py", name)
    assert shared.reexport("pkg/__init__.py", "f") == "pkg.core.f"
    assert shared.reexport("pkg/__init__.py", "k") == "pkg.core.h"
    assert shared.reexport("pkg/__init__.py", "g") is None  # bound twice (a library's `g` too)
    assert shared.reexport("pkg/__init__.py", "f2") is None  # also defined in an indented block
