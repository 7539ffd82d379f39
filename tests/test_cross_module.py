"""Values that cross a module through a function, a method or a base class (issue 34).

The text gate (``analysis/module_text.py``), which files it lets the rules read, and what the
rules then find through another module: each kind of finding with the near misses that must
stay silent, in small projects written to a temporary folder.
"""

from __future__ import annotations

import json
import os
import re
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import example, given, settings
from hypothesis import strategies as st
from jax_codemod import RULES
from jax_codemod.analysis import module_text
from jax_codemod.analysis import project as analysis_project
from jax_codemod.analysis.module_text import (
    Reach,
    attributes_read,
    definitions,
    first_parts,
    first_parts_ascii,
    imports,
    imports_any,
    module_aliases,
    nested_definition,
    star_names,
)
from jax_codemod.cli.main import main
from jax_codemod.engine import project
from jax_codemod.engine.pipeline import file_active_rules

DEFAULT = tuple(rule() for rule in RULES if rule.DEFAULT_ENABLED)


def write(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    project.forget_roots()
    return root


def findings(root: Path, *args: str, select: str = "ALL") -> set[tuple[str, int, str]]:
    with CliRunner().isolation() as (out, err, _):
        code = main(["run", "--dry-run", "--no-cache", "--no-progress", "--format", "json", "--select", select,
                     *args, *(a for a in [str(root)] if not any(x.endswith(".py") for x in args))])
        text = out.getvalue().decode()
    assert code in (0, 1), err.getvalue().decode()
    return {
        (Path(f["path"]).resolve().relative_to(root.resolve()).as_posix(), f["line"], f["code"])
        for f in json.loads(text)["findings"]
    }


def messages(root: Path, select: str) -> list[str]:
    with CliRunner().isolation() as (out, _err, _):
        main(["run", "--dry-run", "--no-cache", "--no-progress", "--format", "json", "--select", select, str(root)])
        return [f["message"] for f in json.loads(out.getvalue().decode())["findings"]]


# The text of a module ----------------------------------------------------------------------


def test_imports_are_read_in_every_form():
    text = textwrap.dedent("""\
        import os, pkg.sub as alias
        from . import sibling
        from ..up.mod import (a,
            b as c,  # a comment
        )
        from pkg import \\
            d
        def f():
            from .lazy import e
        x = "import nothing"
    """)
    records = [(r.level, r.module, r.names, r.bound) for r in imports(text)]
    assert (0, "os", None, "os") in records
    assert (0, "pkg.sub", None, "alias") in records
    assert (1, "", (("sibling", "sibling"),), "") in records
    assert (2, "up.mod", (("a", "a"), ("b", "c")), "") in records
    assert (0, "pkg", (("d", "d"),), "") in records
    assert (1, "lazy", (("e", "e"),), "") in records
    assert len(records) == 6  # the string is no import
    assert ("", "os") in first_parts(text) and ("..", "up") in first_parts(text)


ODD_IMPORT_LINES = [
    "import a.b, c\n", "from ...x.y import z\n", "from . import (p,\n q)\n", "\timport\tt\n",
    "from\t\x0cm import n\n", "import a,b\n", "x = 1; import s\n", "from\n", "import\n", "from  . import w",
    "imported = 1\nfrom_ = 2\n", "from pkg \\\n    import late\n", "import \x0bv\n", "import a;\n", "# import os\n",
]


def test_the_gates_scan_of_bytes_finds_what_the_scan_of_text_finds(tmp_path):
    # The gate scans a file's import lines in its bytes (most files import nothing of their
    # project and are never decoded); the text's scan is what every later question reads.
    sources = [line.encode() for line in ODD_IMPORT_LINES] + [
        path.read_bytes() for path in Path(__file__).parent.parent.joinpath("codemods").rglob("*.py")
    ]
    for source in sources:
        text = source.decode()
        assert first_parts_ascii(source) == [(d.encode(), n.encode()) for d, n in first_parts(text)], source[:80]
    root = write(tmp_path / "proj", {"pkg/__init__.py": "", "pkg/core.py": "", "tool.py": ""})
    view = project.view_for(str(root / "tool.py"))
    for source in [*sources, b"import pkg\x1f.core\n", b"import \xc3\xa9t\xc3\xa9, pkg\n", b"from core import x\n"]:
        text = source.decode()
        # The text first: the root keeps the last bytes' answer for that text's own question.
        assert view.root._may_import(text, view.path) == view.may_import(source), source[:80]
    assert view.may_import(b"import os\nfrom pkg.core import f\n") and not view.may_import(b"import os, numpy\n")
    # That kept answer is for those bytes only: a text of the same length reads its own imports.
    assert not view.may_import(b"import osx\n") and view.root._may_import("import pkg\n", view.path)
    assert view.may_import(b"import pkg\n") and not view.root._may_import("import osx\n", view.path)


def test_a_librarys_own_relative_imports_do_not_pass_the_gate(tmp_path):
    # A copy of a library in the tree (equinox beside the project) imports the library through
    # its relative imports, whose names ``module_of`` leaves out: the gate does not read such a
    # file's imports (a JAX-heavy tree's equinox files were a tenth of the gate's work). A
    # project's own relative imports pass it, and the gate passes every file whose imports
    # bind something of the root.
    files = {
        "equinox/__init__.py": "from ._module import Module\n",
        "equinox/_module.py": "class Module:\n    pass\n",
        "equinox/nn/__init__.py": "from .._module import Module\nfrom . import conv\n",
        "equinox/nn/conv.py": "from .._module import Module\n",
        "pkg/__init__.py": "from .core import f\n",
        "pkg/core.py": "from . import util\nfrom .util import g\n\ndef f(x):\n    return g(x)\n",
        "pkg/util.py": "def g(x):\n    return x\n",
        "script.py": "from . import nothing\nimport pkg\n",
        "lonely.py": "from . import nothing\n",
    }
    root = write(tmp_path / "proj", files)
    for name, text in files.items():
        path = root / name
        view = project.view_for(str(path))
        bound, stars = view.root._reacher()._bindings(view.path, text)
        imports_root = bool(bound) or any(view.module_of(star) is not None for star in stars)
        passes = view.root.may_import(path.read_bytes(), view.path)
        assert passes or not imports_root, name
        # (A module's relative imports pass unread, where they name nothing: `lonely.py`.)
        assert passes is (name in ("pkg/__init__.py", "pkg/core.py", "script.py", "lonely.py")), name
        project.forget_roots()


def test_a_name_whose_first_part_no_module_has_is_answered_without_a_search(tmp_path):
    # ``Root.module_of`` answers None at once for a first part the importer cannot load the
    # root by (most of a file's imports: the standard library's); the search of each prefix,
    # from the importer's script folder and the source roots, answers the same.
    files = {
        "pkg/__init__.py": "", "pkg/core.py": "", "pkg/sub/mod.py": "", "src/lib/api.py": "",
        "tool.py": "", "scripts/run.py": "", "ns/inner/deep.py": "", "typing.py": "", "helpers.py": "",
    }
    root = project.view_for(str(write(tmp_path / "proj", files) / "tool.py")).root
    names = ["os", "os.path", "typing", "typing.Any", "pkg", "pkg.core.f", "pkg.sub.mod.g", "sub.mod",
             "lib.api.h", "src.lib.api", "core", "run", "inner.deep", "ns.inner.deep.x", "jax.numpy",
             "numpy", "tool.x", "scripts.run", "mod", "api", "deep", "missing.thing", "helpers", "inner"]
    for importer in files:
        for name in names:
            found = None if name.split(".")[0] in analysis_project.LIBRARIES else root._module_of(name, importer)
            assert root.module_of(name, importer) == (None if found is None else (found[0], list(found[1]))), (importer, name)
    # (A library's name is the library's, a module of the root by that name or not.)
    assert root.module_of("os.path", "tool.py") is None and root.module_of("typing.Any", "tool.py") is None
    assert root.module_of("helpers.f", "tool.py") == ("helpers.py", ["f"])


def test_every_first_part_the_search_can_load_is_one_the_gate_looks_for(tmp_path):
    # The gate looks for the names an importer's absolute imports can load from (the source
    # roots' top-level names, its script folder's entries) before it reads any import line;
    # a name the search resolves from that importer must be one of them, from every folder.
    files = {
        "pkg/__init__.py": "", "pkg/core.py": "", "pkg/sub/mod.py": "", "src/lib/api.py": "", "src/lib/x.pyi": "",
        "tool.py": "", "scripts/run.py": "", "scripts/util/deep.py": "", "ns/inner/deep.py": "",
        "tests/helpers.py": "", "tests/test_a.py": "", "tests/unit/__init__.py": "", "tests/unit/test_b.py": "",
        "a.b.py": "", "weird-name/mod.py": "", "stub.pyi": "",
    }
    root = project.view_for(str(write(tmp_path / "proj", files) / "tool.py")).root
    modules = root.modules
    names = {part for path in files for part in path.replace(".pyi", "").replace(".py", "").split("/")}
    dotted = {n for path in files for n in [path.rsplit(".", 1)[0].replace("/", ".")]}
    candidates = names | dotted | {".".join(path.rsplit(".", 1)[0].split("/")[i:]) for path in files for i in range(3)}
    for importer in files:
        looked_for = modules.first_parts_from(modules.script_folder(importer))
        for name in candidates:
            if modules.find(importer, name) is not None:
                assert name.split(".")[0] in looked_for, (importer, name)
    # Far fewer than every stem: `core` is `pkg.core` (or `core` beside it), not `core` from the root.
    assert "core" not in modules.first_parts_from("") and "helpers" in modules.first_parts_from("tests")
    assert "lib" in modules.first_parts_from("") and "helpers" not in modules.first_parts_from("")


def test_a_files_relative_imports_are_read_wherever_its_module_is_no_librarys(tmp_path):
    # The gate reads a file's relative imports unless every name the file can be imported by
    # is a library's (``ModuleMap.tops_of``, asked without sorting the root's module names):
    # it must read them wherever the name the analysis resolves them from (``name_of``) is not.
    files = [
        "pkg/__init__.py", "pkg/core.py", "src/lib/api.py", "src/jax/_src/x.py", "equinox/nn/conv.py",
        "jax/__init__.py", "tests/test_a.py", "a.b/c.py", "tool.py", "src/pkg/core.py",
    ]
    root = project.view_for(str(write(tmp_path / "proj", dict.fromkeys(files, "")) / "tool.py")).root
    for path in files:
        own = root.modules.name_of(path)
        if own is not None and own.partition(".")[0] not in analysis_project.LIBRARIES:
            assert root._relative_may_import(path), path
    assert not root._relative_may_import("equinox/nn/conv.py") and not root._relative_may_import("jax/__init__.py")
    assert root._relative_may_import("src/lib/api.py") and root._relative_may_import("pkg/core.py")


def test_the_gate_passes_a_file_only_where_an_import_may_load_its_root(tmp_path):
    # A library's own file that names no importable module anywhere is answered without reading
    # its imports; a project's files pass where they import it, a test where it imports a
    # helper beside it; a stem deep in a package is no absolute import of the root.
    files = {
        "equinox/__init__.py": "from ._module import Module\n",
        "equinox/_module.py": "from . import _tree\nimport jax\n",
        "equinox/_tree.py": "import jax\n",
        "pkg/__init__.py": "from .core import f\n",
        "pkg/core.py": "import numpy as np\n",
        "tests/helpers.py": "import jax\n",
        "tests/test_a.py": "import os, helpers\n",
        "tests/test_b.py": "import core\n",
        "tests/test_c.py": "x = 'pkg'\nimport os\n",
        "tool.py": "from pkg import core\n",
        "other.py": "import jax  # pkg\n",
    }
    root = write(tmp_path / "proj", files)
    passing = {"pkg/__init__.py", "tests/test_a.py", "tool.py"}
    for name in files:
        view = project.view_for(str(root / name))
        source = (root / name).read_bytes()
        # Of bytes, and of text (a non-ASCII file's way), the same answer.
        assert view.may_import(source) is (name in passing), name
        assert view.root._may_import(source.decode() + "\n# \u00e9\n", view.path) is (name in passing), name
        project.forget_roots()


def _first_parts_line_by_line(text):
    """``first_parts`` (of a str) or ``first_parts_ascii`` (of bytes) as first written: lines
    continued by a backslash joined, then for each word `import` of a line, its statement cut
    out (after the last `;` or `:` before the word where no quote or `#` comes before that,
    else from the line's start), stripped and split, as str or bytes split (the scan matches
    a regex where the statement starts instead)."""
    t = text.__class__
    word = (lambda w: w.encode()) if t is bytes else (lambda w: w)
    text = re.sub(word(r"\\\r?\n"), word(" "), text)
    found = []
    read = set()  # (line, where its statement starts): a statement with the word twice is read once
    for number, whole_line in enumerate(text.split(word("\n"))):
        for occurrence in re.finditer(word("import"), whole_line):
            before = whole_line[: occurrence.start()]
            cut = max(before.rfind(word(";")), before.rfind(word(":")))
            code = cut >= 0 and not any(mark in before[:cut] for mark in (word("'"), word('"'), word("#")))
            if (number, cut if code else -1) in read:
                continue
            read.add((number, cut if code else -1))
            line = whole_line[cut + 1 :] if code else whole_line
            line = line.lstrip(word(" \t"))
            if line.startswith(word("from")):
                words = line[4:].split(None, 1)
                if words and line[4:5] in (word(" "), word("\t")):
                    name = words[0].lstrip(word("."))
                    found.append((words[0][: len(words[0]) - len(name)], name.split(word("."), 1)[0]))
            elif line.startswith(word("import")) and line[6:7] in (word(" "), word("\t")):
                listed = re.split(word("[#;]"), line[6:], maxsplit=1)[0]
                for item in listed.split(word(",")):
                    words = item.split()
                    if words:
                        found.append((word(""), words[0].split(word("."), 1)[0]))
    return found


_IMPORT_PIECES = st.sampled_from(
    ["import", "from", " ", "\t", "\n", "\r", "\x0b", "\x0c", "\x1c", "\u00a0", ".", "..", ",", "a", "pkg", "#", "(", "as", ";",
     "\\", ":", "'", "try"]
)


@settings(max_examples=1000, deadline=None)
@given(text=st.lists(_IMPORT_PIECES, max_size=25).map("".join))
@example(text="".join(ODD_IMPORT_LINES))
@example(text="  \t import a.b\n \t from ..x import y\n")
def test_the_gates_import_scan_reads_each_line_as_the_line_by_line_reading_does(text):
    assert first_parts(text) == _first_parts_line_by_line(text)
    if text.isascii():
        assert first_parts_ascii(text.encode()) == _first_parts_line_by_line(text.encode())
    # The gate's question, which stops at the first import it wants.
    for names in (frozenset(), frozenset({"a"}), frozenset({"pkg", "try"})):
        for relative in (True, False):
            wanted = any(relative if dots else name in names for dots, name in first_parts(text))
            assert imports_any(text, names, lambda answer=relative: answer) is wanted
            if text.isascii():
                # (Of bytes, as bytes split: ``Root.may_import`` reads the text where they differ.)
                encoded = frozenset(n.encode() for n in names)
                wanted = any(relative if dots else name in encoded for dots, name in first_parts_ascii(text.encode()))
                assert imports_any(text.encode(), encoded, lambda answer=relative: answer) is wanted


@settings(max_examples=1000, deadline=None)
@given(text=st.lists(_IMPORT_PIECES, max_size=25).map("".join))
@example(text="import os, pkg\n")
@example(text="import os, \\\n    pkg.core as core\n")
@example(text="import os, \\\r\n    pkg\r\n")
@example(text="from \\\n    pkg import f\n")
def test_every_module_the_analysis_reads_has_its_first_part_in_the_gates_scan(text):
    # The gate (``Root.may_import``) calls a file clean of its project from ``first_parts``:
    # every module ``imports`` reads must be there, or a call into the project goes unread
    # (`import os, helpers` read only `os`: JAX001 missed what `helpers.to_host(x)` does).
    parts = first_parts(text)
    for record in imports(text):
        if record.level:
            assert any(dots for dots, _ in parts), (text, record)
        else:
            assert ("", record.module.split(".")[0]) in parts, (text, record)


@pytest.mark.parametrize(
    "spelling",
    [
        "import helpers", "import os, helpers", "import os as o, helpers", "import os, \\\n    helpers",
        "import os; import helpers", "try: import helpers\nexcept ImportError: helpers = None",
        "if True: import helpers",
        # After a quote on its line a `;` may be in a string: the line is read from its start.
        pytest.param("x = {'a': 1}; import helpers", marks=pytest.mark.xfail(strict=True, reason="a quote before")),
    ],
)
def test_a_module_imported_in_any_spelling_of_an_import_list_is_followed(tmp_path, spelling):
    root = write(tmp_path / "proj", {
        "helpers.py": "import numpy as np\n\ndef to_host(x):\n    return np.asarray(x)\n",
        "main.py": f"{spelling}\nimport jax\n\n@jax.jit\ndef step(x):\n    return helpers.to_host(x) + 1\n",
    })
    (message,) = messages(root, "JAX001")
    assert "`helpers.py` line 4" in message and "np.asarray(x)" in message


def test_top_level_blocks_keep_their_decorators_signatures_and_comments():
    text = textwrap.dedent("""\
        import jax

        @jax.jit
        @other(
            1)
        def step(x,
                 y):
            z = x
        # a comment in column 0 inside the function
            return z

        class Model(Base):
            pass
        LIMIT: int = 3
        X == 2
    """)
    spans = definitions(text)
    assert set(spans) == {"step", "Model", "LIMIT"}
    start, end = spans["step"]
    assert text[start:end].startswith("@jax.jit") and "return z" in text[start:end] and "class" not in text[start:end]


def test_a_binding_inside_try_is_found_where_the_top_level_has_none():
    text = "try:\n    import torch\n    def to_torch(x):\n        return torch.from_dlpack(x)\nexcept ImportError:\n    pass\nafter = 1\n"
    start, end = nested_definition(text, "to_torch")
    assert "from_dlpack" in text[start:end] and "after" not in text[start:end]
    assert nested_definition(text, "missing") is None


def _reach(root: Path) -> Reach:
    view = project.view_for(str(root / "main.py"))
    return view.root._reacher()


CYCLE = {
    "pkg/__init__.py": "from .a import helper\n",
    "pkg/a.py": "from .b import inner\n\ndef helper(x):\n    return inner(x)\n",
    "pkg/b.py": "from . import a\n\ndef inner(x):\n    return a.helper(x) + probe(x)\n\ndef probe(x):\n    return x.__dlpack__()\n",
    "pkg/c.py": "def plain(x):\n    return x\n",
    "main.py": "from pkg import helper\nfrom pkg.c import plain\n",
}


def test_answers_do_not_depend_on_the_order_of_the_questions(tmp_path):
    def ask(order):
        root = write(tmp_path / ("forward" if order == names else "backward"), CYCLE)
        reach = _reach(root)
        wanted = module_text_wanted
        return {name: reach.from_name("k", wanted, name, "main.py") for name in order}

    names = ["pkg.a.helper", "pkg.b.inner", "pkg.b.probe", "pkg.c.plain", "pkg.helper"]
    first = ask(names)
    assert first == ask(list(reversed(names)))
    assert first == {"pkg.a.helper": True, "pkg.b.inner": True, "pkg.b.probe": True, "pkg.c.plain": False,
                     "pkg.helper": True}


def module_text_wanted(text: str) -> bool:
    return "__dlpack__" in text


def test_how_far_a_question_follows(tmp_path):
    root = write(tmp_path, CYCLE)
    reach = _reach(root)
    # Through a re-export to the block that defines it, but not into what it calls...
    assert not reach.from_name("only", module_text_wanted, "pkg.helper", "main.py", follow=False)
    # ...into what it calls in its own module only (b's probe is another module's)...
    assert not reach.from_name("module", module_text_wanted, "pkg.a.helper", "main.py", follow="module")
    assert reach.from_name("module", module_text_wanted, "pkg.b.inner", "main.py", follow="module")
    # ...or everywhere.
    assert reach.from_name("all", module_text_wanted, "pkg.a.helper", "main.py")
    assert module_text.Reach is Reach


# Which files the rules read -------------------------------------------------------------

HELPERS = {
    "interop/__init__.py": "from .convert import to_torch\n",
    "interop/convert.py": """\
        import numpy as np
        import torch

        def to_torch(x):
            return torch.from_dlpack(x)

        def to_host(x):
            return np.asarray(x)
    """,
    "interop/quiet.py": "def double(x):\n    return x * 2\n",
}


def active(root: Path, name: str, text: str) -> set[str]:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    project.forget_roots()
    return {rule.CODE for rule in file_active_rules(str(path), path.read_bytes(), DEFAULT)}


def test_the_gate_reads_a_file_only_where_another_module_can_lead_to_a_finding(tmp_path):
    root = write(tmp_path, HELPERS)
    sharded = "import jax\nfrom jax.sharding import NamedSharding\n"
    assert "JAX002" in active(root, "a.py", sharded + "from interop import to_torch\nto_torch(x)\n")
    # The module it calls into exports nothing...
    assert "JAX002" not in active(root, "b.py", sharded + "from interop.quiet import double\ndouble(x)\n")
    # ...or the file places nothing and imports nothing that does.
    assert "JAX002" not in active(root, "c.py", "from interop import to_torch\nto_torch(x)\n")
    # JAX001: a file that traces, calling a helper with an access; not one that does not trace.
    assert "JAX001" in active(root, "d.py", "import jax\nfrom interop.convert import to_host\njax.jit(to_host)\n")
    assert "JAX001" not in active(root, "e.py", "from interop.convert import to_host\nto_host(1)\n")
    assert not active(root, "f.py", "import os\nimport numpy as np\n")


def test_the_gate_follows_the_names_a_file_reads_of_a_package_it_imports_whole(tmp_path):
    # `interop/__init__.py` holds no export text; `interop.to_torch` is re-exported from
    # `interop/convert.py`, which does. The names read through the package decide, not its text.
    root = write(tmp_path, HELPERS)
    sharded = "import jax\nfrom jax.sharding import NamedSharding\n"
    assert "JAX002" in active(root, "a.py", sharded + "import interop\ninterop.to_torch(x)\n")
    assert "JAX002" in active(root, "b.py", sharded + "import interop.convert as cv\ncv.to_torch(x)\n")
    assert "JAX002" in active(root, "c.py", sharded + "import interop.convert\ninterop.convert.to_torch(x)\n")
    assert "JAX002" not in active(root, "d.py", sharded + "import interop.quiet\ninterop.quiet.double(x)\n")
    assert "JAX001" in active(root, "e.py", "import jax\nimport interop\njax.jit(interop.convert.to_host)\n")


def test_a_module_too_long_to_parse_is_a_dead_end_for_the_gate_as_for_the_analysis(tmp_path, monkeypatch):
    # Such a module is read as a library's (no value followed into it): a name that leads to
    # export or access text only through it switches no rule on.
    caller = textwrap.dedent("""\
        import jax
        from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
        from interop import to_torch
        from interop.convert import to_host

        mesh = Mesh(jax.devices(), ("x",))
        batch = jax.device_put(jax.numpy.ones(8), NamedSharding(mesh, P("x")))
        t = to_torch(batch)
        jax.jit(to_host)(batch)
    """)
    root = write(tmp_path, {**HELPERS, "main.py": caller})
    assert {"JAX001", "JAX002"} <= {code for _path, _line, code in findings(root)}
    convert = len((root / "interop/convert.py").read_text())
    monkeypatch.setattr(analysis_project, "MAX_PARSED_CHARS", convert - 1)
    project.forget_roots()
    assert not {"JAX001", "JAX002"} & {code for _path, _line, code in findings(root)}
    text = "import jax\nfrom jax.sharding import NamedSharding\nfrom interop import to_torch\nto_torch(x)\n"
    assert "JAX002" not in active(root, "a.py", text)
    assert "JAX001" not in active(root, "b.py", "import jax\nfrom interop.convert import to_host\njax.jit(to_host)\n")
    monkeypatch.setattr(analysis_project, "MAX_PARSED_CHARS", convert)
    assert "JAX002" in active(root, "a.py", text)


def test_the_names_a_module_binds_to_jax_modules_are_read_from_its_text():
    text = textwrap.dedent("""\
        import jax
        import jax.numpy as jnp
        from jax import numpy as jp, lax
        from jax.numpy import array as arr
        import numpy as np
        from jax import random as rnd
        rnd = np.random
        y = self.jnp.zeros(3) + jp . ones(2) + arr([1])
    """)
    # `jax` binds itself; `lax` is no other name; `arr` is called, not a module; `rnd` is rebound.
    assert module_aliases(text, "jax") == {"jnp", "jp"}
    assert module_aliases("import numpy as jnp\n", "jax") == frozenset()


def test_a_helper_that_calls_jax_through_its_own_alias_switches_no_access_on(tmp_path):
    # brax's math.py: `from jax import numpy as jp` ... `jp.array([...])` is JAX's, no consumer.
    helpers = {
        "tools/__init__.py": "",
        "tools/jaxy.py": "from jax import numpy as jp\n\ndef rotate(q):\n    return jp.asarray(q) * 2\n",
        "tools/host.py": "import numpy as jp\n\ndef rotate(q):\n    return jp.asarray(q) * 2\n",
    }
    root = write(tmp_path, helpers)
    traced = "import jax\nfrom tools.{} import rotate\njax.jit(rotate)(1.0)\n"
    assert "JAX001" not in active(root, "a.py", traced.format("jaxy"))
    assert "JAX001" in active(root, "b.py", traced.format("host"))
    found = {(path, code) for path, _line, code in findings(root, select="JAX001")}
    assert found == {("b.py", "JAX001")}


def test_a_transform_applied_to_an_imported_function_is_followed_where_the_file_never_calls_it(tmp_path):
    # `jax.jit(to_host)(x)` alone: no call of `to_host(` in the file, and it still runs traced.
    root = write(tmp_path, {
        **HELPERS,
        "a.py": "import jax\nimport jax.numpy as jnp\nfrom interop.convert import to_host\n\njax.jit(to_host)(jnp.ones(3))\n",
        "b.py": "import jax\nfrom interop.convert import to_host\n\ndef run(x):\n    f = jax.vmap(to_host, 0)\n    return f(x)\n",
    })
    assert findings(root, select="JAX001") == {("a.py", 5, "JAX001"), ("b.py", 5, "JAX001")}


def test_a_transform_of_a_partial_of_an_imported_function_traces_what_the_partial_leaves(tmp_path):
    # `partial` binds constants: the array the jitted partial gets is the traced one.
    root = write(tmp_path, {
        **HELPERS,
        "interop/scaled.py": "import numpy as np\n\ndef scaled(x, scale=1.0):\n    return np.asarray(x) * scale\n",
        "a.py": "import functools\nimport jax\nfrom interop.scaled import scaled\n\ndef run(x):\n    return jax.jit(functools.partial(scaled, scale=2.0))(x)\n",
        "b.py": "import functools\nimport jax\nfrom interop.scaled import scaled\n\ndef run(host, s):\n    return jax.jit(functools.partial(scaled, host))(s)\n",
    })
    assert findings(root, select="JAX001") == {("a.py", 6, "JAX001")}


def test_a_helper_that_places_as_its_caller_says_is_read_with_each_calls_arguments(tmp_path):
    # Only the call knows the sharding: each call's result is placed as that call says.
    root = write(tmp_path, {
        "lib/__init__.py": "",
        "lib/place.py": "import jax\n\ndef place(x, sharding):\n    return jax.device_put(x, sharding)\n",
        "a.py": textwrap.dedent("""\
            import jax
            import jax.numpy as jnp
            import numpy as np
            from jax.sharding import NamedSharding, PartitionSpec, SingleDeviceSharding
            from lib.place import place

            mesh = jax.sharding.Mesh(jax.devices(), ("d",))

            def run():
                one = place(jnp.ones(8), SingleDeviceSharding(jax.devices()[0]))
                many = place(jnp.ones(8), NamedSharding(mesh, PartitionSpec("d")))
                host = np.from_dlpack(one)
                return host, np.from_dlpack(many)
        """),
    })
    assert findings(root, select="JAX002") == {("a.py", 13, "JAX002")}


def test_a_tree_handed_to_another_modules_leaf_export_is_reported_without_a_fix(tmp_path):
    # `jax.tree.map(torch.from_dlpack, tree)` in the callee: the tree's sharded leaf raises there.
    # Wrapping the tree itself gathers nothing, so the finding names the gather and fixes nothing;
    # an argument no fix can wrap (a dict display) is reported too.
    root = write(tmp_path, {
        "lib/__init__.py": "",
        "lib/convert.py": "import jax\nimport torch\n\ndef tree_to_torch(tree):\n    return jax.tree.map(torch.from_dlpack, tree)\n",
        "a.py": textwrap.dedent("""\
            import jax
            import jax.numpy as jnp
            from jax.sharding import NamedSharding, PartitionSpec
            from lib.convert import tree_to_torch

            mesh = jax.sharding.Mesh(jax.devices(), ("d",))
            x = jax.device_put(jnp.ones(8), NamedSharding(mesh, PartitionSpec("d")))
            tree = {"x": x, "n": jnp.ones(2)}
            host = tree_to_torch({"y": jnp.ones(3)})
            first = tree_to_torch(tree)
            second = tree_to_torch({"x": x})
        """),
    })
    assert findings(root, select="JAX002") == {("a.py", 10, "JAX002"), ("a.py", 11, "JAX002")}
    found = messages(root, "JAX002")
    assert all("on every leaf" in m and "no automatic fix" in m for m in found), found
    before = (root / "a.py").read_text()
    main(["run", "--no-cache", "--no-progress", "--unsafe-fixes", "--select", "JAX002", str(root)])
    assert (root / "a.py").read_text() == before


def test_what_a_star_import_binds_is_read_from_the_modules_text():
    text = textwrap.dedent("""\
        import numpy as np
        import torch.utils.dlpack
        from .convert import to_torch as export, *
        from jax import numpy as jnp
        def helper(x): ...
        class Bridge: ...
        LIMIT = 3
        __all__ = ["export", "helper",
                   "np"]
        __all__ += ("Bridge",)
    """)
    names, listed = star_names(text)
    assert names["np"] == (0, "numpy", None) and names["torch"] == (0, "torch", None)
    assert names["export"] == (1, "convert", "to_torch") and names["jnp"] == (0, "jax", "numpy")
    assert names["helper"] == names["Bridge"] == names["LIMIT"] == (0, "", None)
    assert listed == {"export", "helper", "np", "Bridge"}
    assert star_names("def f(): ...\n")[1] is None  # no `__all__`: every public name


def test_a_star_import_of_a_project_module_binds_the_names_the_file_spells(tmp_path):
    root = write(tmp_path, {
        **HELPERS,
        "interop/__init__.py": "from .convert import to_torch\nimport numpy as np\n__all__ = ['to_torch', 'np']\n",
        "interop/more.py": "import torch\n\ndef _private(x):\n    return torch.from_dlpack(x)\n",
    })
    sharded = "import jax\nfrom jax.sharding import NamedSharding\n"
    assert "JAX002" in active(root, "a.py", sharded + "from interop import *\nto_torch(x)\n")
    # A name the module does not bind (`__all__`, a private name) or the file does not spell.
    assert "JAX002" not in active(root, "b.py", sharded + "from interop.more import *\n_private(x)\n")
    assert "JAX002" not in active(root, "c.py", sharded + "from interop import *\nprint(x)\n")
    assert "JAX001" in active(root, "d.py", "import jax\nfrom interop.convert import *\njax.jit(to_host)\n")
    code = PLACED + "import numpy as np\nfrom interop import *\nt = to_torch(batch)\nh = np.asarray(batch)\nu = to_torch(single)\n"
    found = findings(write(tmp_path / "other", {**HELPERS, "main.py": code}), select="JAX002")
    # `np` is bound by both imports to `numpy`: the star import leaves the file's own names alone.
    assert found == {("main.py", 10, "JAX002")}, found


def test_the_names_read_through_an_alias():
    text = "import a.b\nimport a.b as c\nx = a.b.f(c.g, c .  h)\n"
    assert attributes_read(text, "c", ["a.b"]) == ["a.b.g", "a.b.h"]
    # `import a.b` binds `a`: `a.b.f` is read from the package `a`.
    assert "a.b.f" in attributes_read(text, "a", ["a.b"])
    assert attributes_read("import a\nf(a)\n", "a", ["a"]) == []


# JAX002 through another module ----------------------------------------------------------

PLACED = textwrap.dedent("""\
    import jax
    import jax.numpy as jnp
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    MESH = Mesh(jax.devices(), ("x",))
    batch = jax.device_put(jnp.zeros((8, 2)), NamedSharding(MESH, P("x")))
    single = jax.device_put(jnp.zeros(2), jax.devices()[0])
""")


def test_a_sharded_array_handed_to_another_modules_export_is_reported_at_the_call(tmp_path):
    root = write(tmp_path, {
        **HELPERS,
        "interop/classes.py": """\
            import torch

            class Exporter:
                @staticmethod
                def plain(x):
                    return torch.from_dlpack(x)

                @classmethod
                def of_class(cls, x):
                    return torch.from_dlpack(x)

                def keyword(self, *, array):
                    return torch.from_dlpack(array)
        """,
        "relay.py": "from interop.convert import to_torch\n\ndef relay(value):\n    return to_torch(value)\n",
        "main.py": PLACED + textwrap.dedent("""\
            import interop.convert as io
            from interop import to_torch
            from interop.classes import Exporter
            from relay import relay

            to_torch(batch)
            io.to_torch(batch)
            Exporter.plain(batch)
            Exporter.of_class(batch)
            Exporter().keyword(array=batch)
            relay(batch)
            to_torch(single)
        """),
    })
    assert findings(root, select="JAX002") == {("main.py", line, "JAX002") for line in range(13, 19)}


def test_an_export_the_callee_guards_or_that_takes_another_parameter_is_not_reported(tmp_path):
    root = write(tmp_path, {
        "helpers.py": """\
            import torch

            def caught(x):
                try:
                    return torch.from_dlpack(x)
                except BufferError:
                    return torch.from_numpy(x.__array__())

            def checked(x):
                if len(x.sharding.device_set) > 1:
                    x = x.copy()
                return torch.from_dlpack(x)

            def other(x, y):
                return torch.from_dlpack(y)
        """,
        "main.py": PLACED + textwrap.dedent("""\
            from helpers import caught, checked, other

            caught(batch)
            checked(batch)
            other(batch, single)
        """),
    })
    assert findings(root, select="JAX002,JAX006") == set()


def test_a_method_of_another_module_that_exports_a_field_of_a_sharded_instance_is_reported(tmp_path):
    root = write(tmp_path, {
        "holders.py": """\
            import torch

            class Exporter:
                def __init__(self, arr, scale=1):
                    self.arr = arr
                    self.scale = scale

                def export(self):
                    return torch.from_dlpack(self.arr)

                def guarded(self):
                    try:
                        return torch.from_dlpack(self.arr)
                    except BufferError:
                        return torch.from_numpy(self.arr.__array__())

                def export_scale(self):
                    return torch.from_dlpack(self.scale)
        """,
        "main.py": PLACED + textwrap.dedent("""\
            from holders import Exporter

            def built_here():
                return Exporter(batch).export()

            def through_a_name():
                e = Exporter(batch)
                return e.export()

            def one_device():
                return Exporter(single).export()

            def guarded():
                return Exporter(batch).guarded()

            def another_field():
                return Exporter(single, scale=batch).export()

            def overwritten():
                e = Exporter(batch)
                e.arr = single
                return e.export()
        """),
    })
    lines = PLACED.count("\n")
    assert findings(root, select="JAX002") == {
        ("main.py", lines + 4, "JAX002"),
        ("main.py", lines + 8, "JAX002"),
    }
    (message, _) = messages(root, "JAX002")
    assert "`Exporter.export` (through `torch.from_dlpack` of `self.arr` in `holders.py` line 9)" in message
    assert "no automatic fix" in message


def test_a_name_bound_here_to_another_modules_export_is_followed(tmp_path):
    root = write(tmp_path, {
        "exporters.py": """\
            import torch

            def to_torch(x):
                return torch.from_dlpack(x)

            def make_exporter():
                def export(x):
                    return torch.from_dlpack(x)
                return export

            class Exporter:
                def __init__(self, arr):
                    self.arr = arr

                def export(self):
                    return torch.from_dlpack(self.arr)
        """,
        "main.py": PLACED + textwrap.dedent("""\
            from exporters import Exporter, make_exporter, to_torch

            convert = to_torch
            module_level = Exporter(batch)

            def run():
                export = make_exporter()
                return export(batch), convert(batch), module_level.export(), export(single)
        """),
    })
    lines = PLACED.count("\n")
    found = messages(root, "JAX002")
    assert len(found) == 3, found
    assert findings(root, select="JAX002") == {("main.py", lines + 8, "JAX002")}


# JAX001 through another module ----------------------------------------------------------


def test_a_helper_that_only_reads_static_attributes_or_guards_first_is_not_reported(tmp_path):
    root = write(tmp_path, {
        "helpers.py": """\
            import numpy as np
            import jax

            def shape_of(x):
                return x.shape[0] * x.ndim

            def guarded(x):
                if isinstance(x, jax.core.Tracer):
                    return x
                return np.asarray(x)

            def host(x):
                return np.asarray(x)
        """,
        "main.py": """\
            from functools import partial

            import jax
            from helpers import guarded, host, shape_of

            @jax.jit
            def step(x):
                return x * shape_of(x) + guarded(x)

            @partial(jax.jit, static_argnums=1)
            def scaled(x, n):
                return x * host(n).sum()

            # Transformed as they are: static, guarded, or a host callback (concrete there).
            sizes = jax.jit(shape_of)
            checked = jax.vmap(guarded)
            static = jax.jit(host, static_argnums=0)

            @jax.jit
            def called_back(x):
                return jax.pure_callback(host, jax.ShapeDtypeStruct(x.shape, x.dtype), x)
        """,
    })
    assert findings(root, select="JAX001") == set()
    # The same module's host function transformed as it is: reported where it is transformed.
    (root / "main.py").write_text((root / "main.py").read_text() + "hosted = jax.jit(host)\n")
    project.forget_roots()
    lines = (root / "main.py").read_text().count("\n")
    assert findings(root, select="JAX001") == {("main.py", lines, "JAX001")}


def test_a_flax_module_of_another_module_applied_in_a_trace_runs_the_method_it_names(tmp_path):
    """`model.apply(variables, x)` runs the Module's `__call__(x)`; `method=` names another (by
    attribute or by name), and apply's own keywords are not passed on. A Module applied with a
    method chosen at run time, one that defines its own `apply`, and an argument that is no
    tracer stay silent."""
    root = write(tmp_path, {
        "nets.py": """\
            import flax.linen as nn
            import numpy as np

            class Encoder(nn.Module):
                @nn.compact
                def __call__(self, x):
                    return nn.Dense(2)(x) * np.asarray(x).std()

                def pointer(self, x):
                    return x.unsafe_buffer_pointer()

                def scaled(self, n, x):
                    return x * np.asarray(n)

            class Own(nn.Module):
                def apply(self, variables, x):
                    return x * variables

                def __call__(self, x):
                    return np.asarray(x)
        """,
        "train.py": """\
            import jax

            from nets import Encoder, Own

            model = Encoder()

            @jax.jit
            def forward(variables, x):
                return model.apply(variables, x)

            @jax.jit
            def pointer(variables, x):
                return Encoder().apply(variables, x, method="pointer", mutable=False)

            @jax.jit
            def scaled(variables, x):
                return model.apply(variables, 3, x, method=Encoder.scaled, rngs=x)

            def chosen(variables, x, method):
                return jax.jit(lambda v, y: model.apply(v, y, method=method))(variables, x)

            @jax.jit
            def starred(head, x):
                return model.apply(*head, x)  # where the variables end is not known here

            @jax.jit
            def own(variables, x):
                return Own().apply(variables, x)

            apply_fn = jax.jit(model.apply)  # `__call__` with every argument traced
            static_fn = jax.jit(model.apply, static_argnums=1)  # apply's positions: not followed
        """,
    })
    assert findings(root, select="JAX001") == {
        ("train.py", 9, "JAX001"), ("train.py", 13, "JAX001"), ("train.py", 30, "JAX001")
    }


def test_a_file_that_names_no_jax_but_decorates_with_anothers_transform_is_checked(tmp_path):
    root = write(tmp_path, {
        "lib/__init__.py": "",
        "lib/compile.py": """\
            import functools
            import jax

            def my_jit(fn):
                return jax.jit(fn)

            def compiled(**options):
                return functools.partial(jax.jit, **options)

            jit_static = functools.partial(jax.jit, static_argnums=(1,))

            def plain(fn):
                return fn
        """,
        "main.py": """\
            from lib.compile import compiled, jit_static, my_jit, plain

            @my_jit
            def bare(x):
                return x.unsafe_buffer_pointer()

            @compiled(static_argnums=(1,))
            def called(x, n):
                static = n.unsafe_buffer_pointer()
                return x.unsafe_buffer_pointer() + static

            @jit_static
            def aliased(x, n):
                return x.unsafe_buffer_pointer()

            @plain
            def untraced(x):
                return x.unsafe_buffer_pointer()
        """,
    })
    # `n` is static in `called`: concrete, so only `x`'s access there.
    assert findings(root, select="JAX001") == {("main.py", 5, "JAX001"), ("main.py", 10, "JAX001"), ("main.py", 14, "JAX001")}


def test_an_override_of_a_plain_base_is_not_traced(tmp_path):
    root = write(tmp_path, {
        "base.py": "class Agent:\n    def update(self, batch):\n        return self.on_batch(batch)\n\n"
                   "    def on_batch(self, batch):\n        return batch\n",
        "child.py": "import numpy as np\nfrom base import Agent\n\nclass Child(Agent):\n"
                    "    def on_batch(self, batch):\n        return np.asarray(batch)\n",
    })
    assert findings(root, select="JAX001") == set()


# The same findings however the run is made -------------------------------------------------


def test_named_file_pool_and_cache_agree_and_a_change_elsewhere_is_seen(tmp_path, monkeypatch):
    root = write(tmp_path, {**HELPERS, "main.py": PLACED + "from interop import to_torch\nto_torch(batch)\n"})
    monkeypatch.chdir(root)
    whole = findings(root, select="JAX002")
    assert whole == {("main.py", 9, "JAX002")}
    assert findings(root, str(root / "main.py"), select="JAX002") == whole
    assert findings(root, "-j", "2", select="JAX002") == whole
    cache = str(tmp_path / "cache")
    with CliRunner().isolation():
        for _ in range(2):
            assert main(["run", "--check", "--cache-dir", cache, "--select", "JAX002", str(root)]) == 1
    # The helper stops exporting: the cached answer for main.py must not survive it.
    (root / "interop" / "convert.py").write_text("def to_torch(x):\n    return x\n")
    project.forget_roots()
    with CliRunner().isolation():
        assert main(["run", "--check", "--cache-dir", cache, "--select", "JAX002", str(root)]) == 0


# JAX005: backends that feed each other capsules ------------------------------------------


def test_a_sibling_backend_that_returns_tensors_leaves_the_jax_backend_alone(tmp_path):
    files = {
        # The dispatcher: one backend's to_dlpack handed to another's from_dlpack.
        "interfaces/convert.py": """\
            from backends.jax_backend import JaxBackend
            from backends.torch_backend import TorchBackend

            def torch_to_jax(t):
                return JaxBackend().from_dlpack(TorchBackend().to_dlpack(t))
        """,
        "backends/__init__.py": "",
        "backends/jax_backend.py": """\
            import jax.dlpack

            class JaxBackend:
                def from_dlpack(self, a):
                    return jax.dlpack.from_dlpack(a)

                def to_dlpack(self, a):
                    return a
        """,
        "backends/torch_backend.py": """\
            import torch

            class TorchBackend:
                def from_dlpack(self, a):
                    return torch.from_dlpack(a)

                def to_dlpack(self, a):
                    return torch.utils.dlpack.to_dlpack(a)
        """,
    }
    root = write(tmp_path / "capsules", files)
    (message,) = messages(root, "JAX005")
    assert "`TorchBackend.to_dlpack` (`backends/torch_backend.py` line 8)" in message
    files["backends/torch_backend.py"] = files["backends/torch_backend.py"].replace(
        "torch.utils.dlpack.to_dlpack(a)", "a.detach()"
    )
    root = write(tmp_path / "tensors", files)
    assert messages(root, "JAX005") == []
    # Each backend only round-trips its own values where nothing hands one's to another.
    files["backends/torch_backend.py"] = files["backends/torch_backend.py"].replace(
        "a.detach()", "torch.utils.dlpack.to_dlpack(a)"
    )
    # A dispatcher that catches the TypeError (tensorcircuit-ng falls back to NumPy there).
    files["interfaces/convert.py"] = files["interfaces/convert.py"].replace(
        "    return JaxBackend().from_dlpack(TorchBackend().to_dlpack(t))",
        "    try:\n                    return JaxBackend().from_dlpack(TorchBackend().to_dlpack(t))\n"
        "                except TypeError:\n                    return JaxBackend().from_dlpack(t.numpy())",
    )
    root = write(tmp_path / "caught", files)
    assert messages(root, "JAX005") == []
    # Through a helper and a pytree map, and not caught: reported.
    files["interfaces/convert.py"] = """\
        from backends import jax_backend, torch_backend

        def to_capsule(t):
            return torch_backend.TorchBackend().to_dlpack(t)

        def torch_to_jax(ts, tree_map):
            caps = tree_map(to_capsule, ts)
            return tree_map(jax_backend.JaxBackend().from_dlpack, caps)
    """
    root = write(tmp_path / "mapped", files)
    assert len(messages(root, "JAX005")) == 1
    del files["interfaces/convert.py"]
    root = write(tmp_path / "no-dispatcher", files)
    assert messages(root, "JAX005") == []


@pytest.mark.parametrize(
    ("line", "receiver"),
    [
        ("TorchBackend().to_dlpack", "TorchBackend()"),
        ("x = backends[name] . to_dlpack", "backends[name]"),
        ("which_backend(t, True).to_dlpack", "which_backend(t,True)"),
        ("torch.utils.dlpack.to_dlpack", "torch.utils.dlpack"),
        ("(a + b).to_dlpack", None),
        ("f(g(x)).to_dlpack", None),  # nested calls are not read
        ("a" * 500 + ".to_dlpack", None),  # longer than any real receiver
        ("x" + ".to_dlpack" * 1000, None),  # a chain is not read back to its start at every link
    ],
)
def test_the_receiver_of_a_method_is_read_back_from_the_dot(line, receiver):
    from jax_codemod.analysis.capsules import _receiver_before

    assert _receiver_before(line, line.rindex(".")) == receiver


@pytest.fixture(autouse=True)
def _fresh_roots():
    project.forget_roots()
    yield
    project.forget_roots()
    os.environ.pop("CODEMOD_CACHE_DIR", None)


def test_lists_and_dicts_another_module_fills_hold_what_it_writes_into_them(tmp_path):
    root = write(tmp_path, {
        "app/__init__.py": "",
        "app/state.py": """\
            import jax
            from jax.sharding import NamedSharding, PartitionSpec as P

            ROWS = NamedSharding(jax.make_mesh((4,), ("d",)), P("d"))

            class Buffer:
                def __init__(self):
                    self.items = []
                    self.kept = []

                def push(self, x):
                    self.items.append(jax.device_put(x, ROWS))
                    self.kept.append(jax.device_put(x, jax.devices()[0]))

            def collect(xs):
                out = {}
                for i, x in enumerate(xs):
                    out[f"b{i}"] = jax.device_put(x, ROWS)
                return out
        """,
        "app/export.py": """\
            import torch
            from app.state import Buffer, collect

            def run(xs):
                buf = Buffer()
                for x in xs:
                    buf.push(x)
                a = [torch.from_dlpack(t) for t in buf.items]
                b = [torch.from_dlpack(t) for t in buf.kept]
                c = {k: torch.from_dlpack(v) for k, v in collect(xs).items()}
                return a, b, c
        """,
    })
    assert findings(root, select="JAX002") == {("app/export.py", 8, "JAX002"), ("app/export.py", 10, "JAX002")}
    # The finding names the module the array was placed in.
    with CliRunner().isolation() as (out, _err, _):
        main(["run", "--check", "--no-cache", "--no-progress", "--format", "json", "--select", "JAX002", str(root)])
        messages = [f["message"] for f in json.loads(out.getvalue().decode())["findings"]]
    assert all("in `app/state.py`" in message for message in messages), messages


def test_the_gate_takes_a_root_with_a_file_name_that_is_no_utf8(tmp_path):
    # A file name that is no UTF-8 is a str with surrogates here: no import can name it (it is
    # no identifier), and the gate's bytes for it must not fail the whole run.
    root = write(tmp_path / "proj", {"helpers.py": "def f(x):\n    return x\n", "main.py": "import helpers\n"})
    try:
        (root / os.fsdecode(b"\xe9t\xe9.py")).write_text("x = 1\n")
    except (OSError, UnicodeEncodeError):
        pytest.skip("this file system refuses the name")
    view = project.view_for(str(root / "main.py"))
    assert view.may_import(b"import helpers\n") and not view.may_import("import os  # \u00e9\n".encode())
    assert not view.may_import(b"import os\n")
