"""The project gate's answers are kept per imported name, for every file of a root (issue 55).

Most files of a package import the same few names of it (600 of warp's files `import warp as
wp` and read a few hundred `wp.<name>`): what a name leads to is searched once a run, and each
name a file reads through a module it imports whole is placed in the root once a run, not once
per file. What is kept lasts one run: a module changed between two checks in one process is
read again.
"""

from __future__ import annotations

import textwrap
from collections import Counter
from pathlib import Path

import pytest
from jax_codemod import RULES
from jax_codemod.analysis import module_text
from jax_codemod.analysis import project as analysis_project
from jax_codemod.analysis.module_text import Reach, imports
from jax_codemod.engine import project
from jax_codemod.engine.pipeline import Settings, file_active_rules
from jax_codemod.engine.runner import check_file
from jax_codemod.registry import MANIFEST, LazyRule

DEFAULT = tuple(rule() for rule in RULES if rule.DEFAULT_ENABLED)

PACKAGE = {
    "pkg/__init__.py": "from .convert import to_torch\nfrom .quiet import double, halve\n",
    "pkg/convert.py": "import torch\n\n\ndef to_torch(x):\n    return torch.from_dlpack(x)\n",
    "pkg/quiet.py": "def double(x):\n    return x * 2\n\n\ndef halve(x):\n    return x / 2\n",
}
# A file that imports the package whole and reads two of its names, neither of which leads to
# export text: JAX002's gate asks about both and fails the file.
READER = """\
    import pkg as p
    from pkg import halve


    def step(x):
        return p.double(halve(x)) + p.quiet.halve(x)
"""


def write(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    project.forget_roots()
    return root


def test_the_nth_file_importing_the_same_names_searches_and_places_nothing_new(tmp_path, monkeypatch):
    readers = [f"reader_{n}.py" for n in range(6)]
    root = write(tmp_path, {**PACKAGE, **{name: READER for name in readers}})
    work: Counter = Counter()
    search, read, module_of = Reach._search, analysis_project.Root._reach_text, analysis_project.Root.module_of

    def counted_search(answers, start, hit, edges):
        work["searches"] += 1
        return search(answers, start, hit, edges)

    def counted_read(self, path):
        work["module reads"] += 1
        return read(self, path)

    def counted_module_of(self, qualified, importer):
        work["placed"] += 1
        return module_of(self, qualified, importer)

    monkeypatch.setattr(Reach, "_search", staticmethod(counted_search))
    monkeypatch.setattr(analysis_project.Root, "_reach_text", counted_read)
    monkeypatch.setattr(analysis_project.Root, "module_of", counted_module_of)
    per_file = []
    for name in readers:
        work.clear()
        path = root / name
        assert not {rule.CODE for rule in file_active_rules(str(path), path.read_bytes(), DEFAULT)} & {"JAX001", "JAX002"}
        per_file.append(dict(work))
    # The first file's question reads the package and searches from the names it reads...
    assert per_file[0]["searches"] >= 2 and per_file[0]["module reads"] >= 2 and per_file[0]["placed"] >= 3
    # ...every later one reads its own text only: no search, no module read, no name placed.
    assert per_file[1:] == [{}] * (len(readers) - 1)


def test_the_names_read_through_a_package_are_placed_once_for_all_its_files(tmp_path):
    root = write(tmp_path, {**PACKAGE, "a.py": READER, "b.py": READER})
    reach = project.root_for(str(root / "a.py"))[0]._reacher()
    assert not reach.from_file("q", lambda text: "from_dlpack(" in text, "a.py", textwrap.dedent(READER))
    placed = {key: dict(chains) for key, chains in reach._chains_placed.items()}
    assert placed == {("pkg", ""): {".double": ("pkg/__init__.py", "double"), ".quiet.halve": ("pkg/quiet.py", "halve")}}
    assert not reach.from_file("q", lambda text: "from_dlpack(" in text, "b.py", textwrap.dedent(READER))
    assert {key: dict(chains) for key, chains in reach._chains_placed.items()} == placed


def test_a_name_that_becomes_a_module_between_two_checks_in_one_process_is_placed_again(tmp_path):
    # `p.helpers.to_torch` is first an attribute of `pkg` that nothing binds (so it leads
    # nowhere); then `pkg/helpers.py` is added, and exports. The second check, in the same
    # process, reads the root again: the name is that module's function now.
    placed = textwrap.dedent("""\
        import jax
        import jax.numpy as jnp
        from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

        import pkg as p

        MESH = Mesh(jax.devices(), ("x",))
        batch = jax.device_put(jnp.zeros((8, 2)), NamedSharding(MESH, P("x")))
        p.helpers.to_torch(batch)
    """)
    root = write(tmp_path, {**PACKAGE, "main.py": placed})
    settings = Settings(tuple(LazyRule(info, {}) for info in MANIFEST if info.CODE == "JAX002"))
    main = str(root / "main.py")
    assert check_file(main, settings).findings == []
    (root / "pkg" / "helpers.py").write_text("import torch\n\n\ndef to_torch(x):\n    return torch.from_dlpack(x)\n")
    assert [(f.code, f.line) for f in check_file(main, settings).findings] == [("JAX002", 9)]
    (root / "pkg" / "helpers.py").write_text("def to_torch(x):\n    return x\n")
    assert check_file(main, settings).findings == []


@pytest.mark.parametrize("ending", ["\n", "\r\n"])
def test_a_continued_line_is_joined_only_where_it_meets_an_import(ending):
    # The text is read unjoined unless a continued line touches an import statement; the
    # records are those of the joined text either way.
    def joined(text: str) -> list:
        return imports.__wrapped__(module_text._join_continued(" ", text))

    cases = [
        "x = 1 + \\\n    2\nimport os\n",  # a continued line two lines above: read unjoined
        "x = 1; \\\nimport os\n",  # the import's line continues the one before
        "from pkg \\\n    import a, \\\n    b\n",  # the import's line is continued
        "from pkg import (\n    a, \\\n    b)\n",  # a continued line inside its brackets
        "s = 'a\\\\'\nimport os\n",  # a backslash that continues nothing
        "import os \\\n",  # a last line continued to nothing
    ]
    for case in cases:
        text = case.replace("\n", ending)
        assert imports.__wrapped__(text) == joined(text), text
    assert [record.names for record in imports.__wrapped__(cases[3])] == [(("a", "a"), ("b", "b"))]
