"""A file's findings that depend on another module of its project, however the run is made (issue 34).

The project: ``pipeline/data.py`` places a batch over four devices, ``pipeline/export.py``
hands it to torch through DLPack (JAX002). The finding lives in export.py but its reason in
data.py, so every way of running must read data.py: the whole tree, export.py named alone (the
pre-commit hook), stdin with ``--stdin-filename``, one process or a pool, cold or cached, and a
change to data.py alone must change the cached answer for export.py.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from jax_codemod.analysis import project as project_analysis
from jax_codemod.cli.main import main
from jax_codemod.engine import project

DATA = '''import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

MESH = Mesh(np.array(jax.devices()[:4]), ("batch",))
SHARDING = NamedSharding(MESH, PartitionSpec("batch"))


def make_batch(n):
    values = np.arange(n * 4, dtype=np.float32).reshape(n, 4)
    return jax.device_put(values, SHARDING)
'''
ONE_DEVICE = DATA.replace("jax.device_put(values, SHARDING)", "jax.device_put(values, jax.devices()[0])")
EXPORT = '''import torch

from pipeline.data import make_batch


def to_torch(n):
    batch = make_batch(n)
    return torch.from_dlpack(batch)
'''


@pytest.fixture
def tree(tmp_path: Path, monkeypatch) -> Path:
    root = tmp_path / "proj"
    (root / "pipeline").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    (root / "pipeline" / "__init__.py").write_text("")
    (root / "pipeline" / "data.py").write_text(DATA)
    (root / "pipeline" / "export.py").write_text(EXPORT)
    monkeypatch.chdir(root)
    return root


def run(*argv: str, stdin: bytes | None = None) -> tuple[int, dict]:
    with CliRunner().isolation(input=stdin) as (out, err, _):
        code = main(["run", "--dry-run", "--format", "json", "--no-progress", "--select", "JAX002", *argv])
        text = out.getvalue().decode()
    assert code in (0, 1), err.getvalue().decode()
    return code, json.loads(text)


def findings(document: dict) -> list[tuple[str, int, str]]:
    return sorted((f["path"].replace(os.sep, "/"), f["line"], f["code"]) for f in _all(document))


def _all(document: dict) -> list[dict]:
    return document["findings"]


def test_the_whole_tree_finds_the_export_and_names_where_the_batch_is_placed(tree):
    code, document = run("--no-cache", ".")
    assert code == 1
    (finding,) = _all(document)
    assert finding["path"].endswith("export.py") and finding["line"] == 8
    # The reason points at the other module, with the line that places the batch.
    assert "pipeline/data.py" in finding["message"] and "line 9" in finding["message"], finding["message"]


def test_naming_the_file_alone_gives_the_same_findings(tree):
    _, whole = run("--no-cache", ".")
    _, named = run("--no-cache", "pipeline/export.py")
    assert findings(named) == [f for f in findings(whole) if f[0].endswith("export.py")]


def test_stdin_with_the_file_name_reads_the_project_too(tree):
    code, document = run("--stdin-filename", "pipeline/export.py", "-", stdin=EXPORT.encode())
    assert code == 1 and [f["code"] for f in _all(document)] == ["JAX002"]


def test_a_change_to_the_imported_module_alone_invalidates_the_cached_result(tree, tmp_path):
    cache = str(tmp_path / "cache")
    assert run("--cache-dir", cache, ".")[0] == 1
    assert run("--cache-dir", cache, ".")[0] == 1  # warm: the same answer from the cache
    (tree / "pipeline" / "data.py").write_text(ONE_DEVICE)  # export.py is byte-identical
    code, document = run("--cache-dir", cache, ".")
    assert code == 0 and not _all(document)
    (tree / "pipeline" / "data.py").write_text(DATA)
    assert run("--cache-dir", cache, ".")[0] == 1


def test_a_star_imported_module_is_read_and_a_change_to_it_invalidates_the_cached_result(tree, tmp_path):
    (tree / "pipeline" / "export.py").write_text(EXPORT.replace("from pipeline.data import make_batch", "from pipeline.data import *"))
    cache = str(tmp_path / "cache")
    code, document = run("--cache-dir", cache, ".")
    assert code == 1 and "pipeline/data.py" in _all(document)[0]["message"]
    (tree / "pipeline" / "data.py").write_text(ONE_DEVICE)
    assert run("--cache-dir", cache, ".")[0] == 0
    # `__all__` leaves `make_batch` out: the star import binds no such name (a NameError, not
    # an export of a sharded batch).
    (tree / "pipeline" / "data.py").write_text(DATA + '\n__all__ = ["MESH", "SHARDING"]\n')
    assert run("--cache-dir", cache, ".")[0] == 0
    (tree / "pipeline" / "data.py").write_text(DATA)
    assert run("--cache-dir", cache, ".")[0] == 1


# A caller that holds a DLPack call of its own (so its rules are the same whatever interop.py
# says) and asks of interop.py only from the text whether `to_torch` exports.
CALLER = """import jax
import numpy as np
import torch
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from pipeline.interop import to_torch

MESH = Mesh(np.array(jax.devices()[:4]), ("batch",))


def export(values):
    batch = jax.device_put(values, NamedSharding(MESH, PartitionSpec("batch")))
    torch.from_dlpack(np.ones(3))
    return to_torch(batch)
"""
PASSES_ON = "def to_torch(x):\n    return x\n"
EXPORTS = "import torch\n\n\ndef to_torch(x):\n    return torch.from_dlpack(x)\n"
# JAX002 decides a file that can place nothing on several devices from the texts alone: the
# exporter below places nothing itself, so its cached result rests on what `make` spells.
SINGLE = "import jax.numpy as jnp\n\n\ndef make():\n    return jnp.ones(8)\n"
SHARDED = """import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

MESH = Mesh(np.array(jax.devices()[:4]), ("batch",))


def make():
    return jax.device_put(jnp.ones(8), NamedSharding(MESH, PartitionSpec("batch")))
"""
EXPORTER = "import jax\nimport torch\n\nfrom pipeline.maker import make\n\n\ndef export():\n    return torch.from_dlpack(make())\n"
# JAX001: a traced function hands its tracer to another module's helper; the caller's own access
# (in a function nothing traces) keeps its rules the same whatever the helper says.
TRACED_CALLER = """import jax

from pipeline.stats import summarize


def on_host(x):
    return x.item()


@jax.jit
def step(x):
    return summarize(x)
"""
PURE = "def summarize(x):\n    return x * 2\n"
CONCRETE = "def summarize(x):\n    return x.sum().item()\n"


@pytest.mark.parametrize(
    ("select", "module", "before", "after", "caller_name", "caller"),
    [
        ("JAX002", "interop", PASSES_ON, EXPORTS, "caller", CALLER),
        ("JAX001", "stats", PURE, CONCRETE, "traced", TRACED_CALLER),
        ("JAX002", "maker", SINGLE, SHARDED, "exporter", EXPORTER),
    ],
    ids=["export-through-a-call", "access-through-a-traced-call", "placement-in-an-imported-module"],
)
def test_a_module_asked_of_only_from_its_text_invalidates_the_cached_result(
    tree, tmp_path, select, module, before, after, caller_name, caller
):
    # Whether the callee can lead to an export (an access) is read from its text alone, and
    # that answer is kept for the run: the cached result of the caller rests on those bytes too.
    (tree / "pipeline" / f"{module}.py").write_text(before)
    (tree / "pipeline" / f"{caller_name}.py").write_text(caller)
    cache = str(tmp_path / "cache")

    def caller_findings(*argv):
        with CliRunner().isolation() as (out, err, _):
            code = main(["run", "--dry-run", "--format", "json", "--no-progress", "--select", select, *argv, "."])
            text = out.getvalue().decode()
        assert code in (0, 1), err.getvalue().decode()
        return [f for f in findings(json.loads(text)) if f[0].endswith(f"{caller_name}.py")]

    assert caller_findings("--cache-dir", cache) == caller_findings("--no-cache") == []
    (tree / "pipeline" / f"{module}.py").write_text(after)  # the caller is byte-identical
    warm = caller_findings("--cache-dir", cache)
    assert warm and warm == caller_findings("--no-cache")
    (tree / "pipeline" / f"{module}.py").write_text(before)
    assert caller_findings("--cache-dir", cache) == []


# A caller whose own text fails JAX002's prefilter (no DLPack call): only the project gate,
# which reads interop.py's text, switches the rule on for it.
GATED_CALLER = """import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from pipeline.interop import to_torch

MESH = Mesh(np.array(jax.devices()[:4]), ("batch",))


def export(values):
    batch = jax.device_put(values, NamedSharding(MESH, PartitionSpec("batch")))
    return to_torch(batch)
"""


@pytest.fixture
def gate_calls(monkeypatch) -> list[str]:
    """Record each file the project gate is asked about (not answered from the cache)."""
    from jax_codemod.engine import cache as cache_module

    calls: list[str] = []
    real = cache_module.project_active

    def spy(path, *args):
        calls.append(os.path.basename(path))
        return real(path, *args)

    monkeypatch.setattr(cache_module, "project_active", spy)
    return calls


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_the_gates_answers_are_kept_while_the_root_is_unchanged(tree, tmp_path, monkeypatch, gate_calls, pool_calls, jobs):
    monkeypatch.setattr(project, "RACY_NS", 0)  # the tree was written just now
    (tree / "pipeline" / "interop.py").write_text(PASSES_ON)
    (tree / "pipeline" / "caller.py").write_text(GATED_CALLER)
    cache = str(tmp_path / "cache")

    def caller_findings(*argv):
        _, document = run(*argv, "-j", jobs, ".")
        return [f for f in findings(document) if f[0].endswith("caller.py")]

    assert caller_findings("--cache-dir", cache) == []
    assert "caller.py" in gate_calls
    gate_calls.clear()
    assert caller_findings("--cache-dir", cache) == []
    assert gate_calls == []  # a warm run over the same tree asks the gate nothing
    # The caller is byte-identical; the gate's answer for it rests on interop.py's text.
    (tree / "pipeline" / "interop.py").write_text(EXPORTS)
    warm = caller_findings("--cache-dir", cache)
    assert "caller.py" in gate_calls
    assert warm and warm == caller_findings("--no-cache")
    (tree / "pipeline" / "interop.py").write_text(PASSES_ON)
    assert caller_findings("--cache-dir", cache) == []


def test_the_gates_answers_are_not_kept_for_a_root_changed_a_moment_ago(tree, tmp_path, gate_calls):
    # Another edit within the file system's timestamp granularity could leave the root's state
    # as it is: such a state keys nothing.
    (tree / "pipeline" / "interop.py").write_text(PASSES_ON)
    (tree / "pipeline" / "caller.py").write_text(GATED_CALLER)
    cache = str(tmp_path / "cache")
    run("--cache-dir", cache, ".")
    gate_calls.clear()
    run("--cache-dir", cache, ".")
    assert "caller.py" in gate_calls


def test_a_forged_gate_entry_is_not_believed(tree, tmp_path, monkeypatch, gate_calls):
    # A checkout can carry a cache of its own: a gate entry saying the caller needs no more rules
    # must not silence the finding unless this user's key made it.
    monkeypatch.setattr(project, "RACY_NS", 0)
    (tree / "pipeline" / "interop.py").write_text(EXPORTS)
    (tree / "pipeline" / "caller.py").write_text(GATED_CALLER)
    cache = tmp_path / "cache"
    assert run("--cache-dir", str(cache), ".")[0] == 1
    entries = [p for p in cache.rglob("*.json") if b'"state"' in p.read_bytes().partition(b"\n")[2][:10]]
    assert len(entries) == 1
    mac, _, body = entries[0].read_bytes().partition(b"\n")
    document = json.loads(body)
    for answer in document["answers"].values():
        answer[2] = []  # no rule switched on by another module
    entries[0].write_bytes(b"0" * len(mac) + b"\n" + json.dumps(document).encode())
    for leftover in cache.rglob("*.json"):  # results too, so the gate is consulted
        if leftover != entries[0]:
            leftover.unlink()
    gate_calls.clear()
    code, document = run("--cache-dir", str(cache), ".")
    assert code == 1 and any(f[0].endswith("caller.py") for f in findings(document))
    assert "caller.py" in gate_calls


def test_a_roots_state_changes_with_any_file_of_it(tree, monkeypatch):
    monkeypatch.setattr(project, "RACY_NS", 0)
    top = str(tree)

    def state():
        project.forget_roots()
        return project.state_of(top)

    first = state()
    assert first is not None and state() == first
    (tree / "pipeline" / "new.py").write_text("")  # a module that may change how an import resolves
    added = state()
    assert added != first
    (tree / "pipeline" / "new.py").rename(tree / "pipeline" / "other.py")
    assert state() not in (first, added)
    (tree / "pipeline" / "other.py").unlink()
    (tree / "pipeline" / "data.py").write_text(ONE_DEVICE)
    assert state() not in (first, added)
    monkeypatch.setattr(project, "RACY_NS", 10**12)
    assert state() is None  # changed a moment ago


def test_check_file_with_a_cache_sees_an_imported_module_changed_between_calls(tree, tmp_path):
    # One file at a time in a long-lived process (runner.check_file): the digests a cached result
    # is checked against are read again for each call, not kept from the last one.
    from jax_codemod.engine.cache import Cache
    from jax_codemod.engine.pipeline import Settings
    from jax_codemod.engine.runner import check_file
    from jax_codemod.registry import MANIFEST, LazyRule

    settings = Settings(tuple(LazyRule(info, {}) for info in MANIFEST if info.CODE == "JAX002"))
    cache = Cache.open(str(tmp_path / "cache"), settings)
    export = str(tree / "pipeline" / "export.py")
    assert [f.code for f in check_file(export, settings, cache).findings] == ["JAX002"]
    (tree / "pipeline" / "data.py").write_text(ONE_DEVICE)
    assert check_file(export, settings, cache).findings == []
    (tree / "pipeline" / "data.py").write_text(DATA)
    assert [f.code for f in check_file(export, settings, cache).findings] == ["JAX002"]


@pytest.mark.parametrize("cached", [False, True], ids=["no-cache", "cache"])
def test_check_file_sees_the_gates_module_changed_between_calls(tree, tmp_path, monkeypatch, cached):
    # A long-lived caller: what the gate read of interop.py at the first call is not its
    # answer at the second.
    from jax_codemod.engine.cache import Cache
    from jax_codemod.engine.pipeline import Settings
    from jax_codemod.engine.runner import check_file
    from jax_codemod.registry import MANIFEST, LazyRule

    monkeypatch.setattr(project, "RACY_NS", 0)
    (tree / "pipeline" / "interop.py").write_text(PASSES_ON)
    caller = tree / "pipeline" / "caller.py"
    caller.write_text(GATED_CALLER)
    settings = Settings(tuple(LazyRule(info, {}) for info in MANIFEST if info.CODE == "JAX002"))
    cache = Cache.open(str(tmp_path / "cache"), settings) if cached else None
    assert check_file(str(caller), settings, cache).findings == []
    (tree / "pipeline" / "interop.py").write_text(EXPORTS)
    assert [f.code for f in check_file(str(caller), settings, cache).findings] == ["JAX002"]
    (tree / "pipeline" / "interop.py").write_text(PASSES_ON)
    assert check_file(str(caller), settings, cache).findings == []


def test_one_process_and_a_pool_agree(tree, pool_calls):
    for index in range(12):  # more files, so that the pool gets several chunks
        (tree / "pipeline" / f"export_{index}.py").write_text(EXPORT)
    _, serial = run("--no-cache", "-j", "1", ".")
    assert pool_calls == []
    _, pooled = run("--no-cache", "-j", "2", ".")
    assert pool_calls, "the pool was not used"
    assert serial == pooled
    assert len(_all(serial)) == 13


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_hostile_modules_are_not_read_and_the_run_finishes(tree, tmp_path):
    outside = tmp_path / "secret.py"
    outside.write_text(DATA)
    data = tree / "pipeline" / "data.py"
    # A FIFO never blocks the run, a link out of the tree is not followed: the module is unread,
    # so the batch is of unknown placement (no finding, as for a third-party module).
    data.unlink()
    os.mkfifo(data)
    assert run("--no-cache", "pipeline/export.py")[0] == 0
    data.unlink()
    data.symlink_to(outside)
    assert run("--no-cache", "pipeline/export.py")[0] == 0
    # A module that does not parse is skipped the same way; the file that imports it is checked.
    data.unlink()
    data.write_text("def make_batch(:\n")
    assert run("--no-cache", "pipeline/export.py")[0] == 0


def test_a_cycle_of_reexports_ends(tree):
    (tree / "pipeline" / "a.py").write_text("from pipeline.b import make_batch\n")
    (tree / "pipeline" / "b.py").write_text("from pipeline.a import make_batch\n")
    (tree / "pipeline" / "export.py").write_text(EXPORT.replace("pipeline.data", "pipeline.a"))
    assert run("--no-cache", "pipeline/export.py")[0] == 0


def test_reexports_relative_imports_and_module_constants_are_followed(tree):
    (tree / "pipeline" / "__init__.py").write_text("from .data import make_batch, SHARDING\n")
    (tree / "pipeline" / "export.py").write_text(
        "import jax\nimport torch\n\nfrom . import make_batch\nfrom .data import SHARDING\n\n\n"
        "def to_torch(n):\n    return torch.from_dlpack(make_batch(n))\n\n\n"
        "def placed(x):\n    return torch.from_dlpack(jax.device_put(x, SHARDING))\n"
    )
    _, document = run("--no-cache", "pipeline/export.py")
    assert [f["line"] for f in _all(document)] == [9, 13]


def test_a_src_layout_and_a_library_named_like_a_module_of_the_root(tree):
    (tree / "src" / "proj").mkdir(parents=True)
    (tree / "src" / "proj" / "__init__.py").write_text("")
    (tree / "src" / "proj" / "data.py").write_text(DATA)
    # A root that holds a folder named `jax` (a vendored copy) is still judged by the API table.
    (tree / "jax").mkdir()
    (tree / "jax" / "__init__.py").write_text("def device_put(x, s):\n    return x\n")
    (tree / "tool.py").write_text(EXPORT.replace("pipeline.data", "proj.data"))
    _, document = run("--no-cache", "tool.py")
    assert [f["code"] for f in _all(document)] == ["JAX002"]


def test_the_root_of_a_file_does_not_depend_on_how_it_is_named(tree, monkeypatch):
    expected = str(tree)
    assert project.root_of("pipeline/export.py") == expected
    assert project.root_of(str(tree / "pipeline" / "export.py")) == expected
    monkeypatch.chdir(tree / "pipeline")
    assert project.root_of("export.py") == expected


@pytest.mark.skipif(sys.platform == "win32", reason="posix paths")
def test_the_root_listing_skips_environments_and_hidden_folders(tree):
    (tree / ".venv" / "lib").mkdir(parents=True)
    (tree / ".venv" / "lib" / "x.py").write_text("")
    (tree / "env").mkdir()
    (tree / "env" / "pyvenv.cfg").write_text("")
    (tree / "env" / "y.py").write_text("")
    listed = project.list_files(str(tree))
    assert "pipeline/data.py" in listed
    assert not [path for path in listed if path.startswith((".venv", "env/"))]



def test_a_jit_alias_reexported_through_a_module_that_never_names_jax(tree, monkeypatch):
    """A module that names no transform library is not parsed to ask whether its name is a jit
    alias, unless it imports that name (a re-export): then the alias is still followed."""
    (tree / "pipeline" / "aliases.py").write_text(
        "import functools\nimport jax\n\ncompiled = functools.partial(jax.jit, static_argnames=(\"scale\",))\n"
    )
    (tree / "pipeline" / "api.py").write_text("from .aliases import compiled\n\n\ndef plain(fn):\n    return fn\n")
    (tree / "pipeline" / "step.py").write_text(
        "import jax\n\nfrom pipeline.api import compiled, plain\n\n\n@compiled\ndef step(scale, x):\n"
        "    return x.unsafe_buffer_pointer()\n\n\n@plain\ndef host(x):\n    return x.unsafe_buffer_pointer()\n"
    )
    parsed = []
    original = project_analysis.Root.tree
    monkeypatch.setattr(project_analysis.Root, "tree", lambda self, path: parsed.append(path) or original(self, path))
    _, document = run("--no-cache", "--select", "JAX001", "pipeline/step.py")
    assert [(f["code"], f["line"]) for f in _all(document)] == [("JAX001", 8)]
    assert "pipeline/aliases.py" in parsed and "pipeline/api.py" in parsed
    # `plain`'s module names no library and does not import `plain`: asked from its text alone.
    (tree / "pipeline" / "api.py").write_text("def plain(fn):\n    return fn\n")
    parsed.clear()
    (tree / "pipeline" / "step.py").write_text(
        "import jax\n\nfrom pipeline.api import plain\n\n\n@plain\ndef host(x):\n    return x.unsafe_buffer_pointer()\n"
    )
    _, document = run("--no-cache", "--select", "JAX001", "pipeline/step.py")
    assert _all(document) == [] and "pipeline/api.py" not in parsed


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sampled_from(["import", "import (", "imports", "from", " ", "\n", "\r\n", "(", ")", "*", ",", ".", "jax", "jaxx",
                              "name", "_name", "name2", "é", "\t"]), max_size=30).map("".join),
    st.sampled_from(["name", "jax", "import", "é"]),
)
def test_a_modules_spelling_facts_answer_as_its_text_does(text, name):
    """``_may_spell`` asks each module's text once, for every name imported from it; the answer
    is the pattern's, asked of the text for each name."""
    from jax_codemod.analysis.transforms import _imports_spelling, _spelling_facts

    names_library, imported = _spelling_facts(text)
    assert (names_library or "*" in imported or name in imported) == _imports_spelling(text, name)


def test_parsed_modules_are_kept_for_a_root_or_across_roots_in_a_pool_worker(tmp_path, monkeypatch):
    """A module's tree is kept while files of its root are checked; a serial run drops it at a
    file of another root (held, it raised the peak memory of every later file), a pool's worker,
    whose chunks mix roots, keeps it within the one budget (dropped at each switch, the same
    modules were parsed again and again), shared by modules of the same text. A tree larger
    than the budget is never kept (it would push out every other tree for itself)."""
    for name, value in (("a", 1), ("b", 2), ("c", 1)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "pyproject.toml").write_text("")
        (tmp_path / name / "shared.py").write_text(f"VALUE = {value}\n")
        (tmp_path / name / "one.py").write_text("from shared import VALUE\n")
        (tmp_path / name / "two.py").write_text("from shared import VALUE\n")
    parsed = []
    original = project_analysis._parse
    monkeypatch.setattr(project_analysis, "_parse", lambda text, path: parsed.append(path) or original(text, path))

    def read(root: str, name: str) -> None:
        view = project.view_for(str(tmp_path / root / name))
        assert view.context("shared.py") is not None
        view.release()

    project.forget_roots()
    read("a", "one.py")
    read("a", "two.py")
    assert len(parsed) == 1
    read("b", "one.py")
    read("a", "two.py")  # dropped at the switch to b
    assert len(parsed) == 3

    monkeypatch.setattr(project, "_interleaved", False)
    project.roots_interleave()  # a pool's worker
    project.forget_roots()
    read("a", "one.py")
    read("b", "one.py")  # another text: parsed
    read("a", "two.py")  # kept through the other root's file
    read("c", "one.py")  # a's text at the same path: the same tree
    assert len(parsed) == 5
    monkeypatch.setattr(project_analysis, "TREE_CACHE_CHARS", 4)
    project.forget_roots()
    read("a", "one.py")
    read("a", "two.py")
    assert len(parsed) == 7


def test_a_module_is_parsed_once_a_run_to_say_which_names_it_spells(tree, monkeypatch):
    """A module whose text may spell a transform (its star import hides what it binds) is
    parsed to say which of its names are spellings once a run, however many files ask of it
    and with no tree kept: a class imported from it is no transform, the alias it imports is."""
    (tree / "pipeline" / "aliases.py").write_text(
        "import functools\nimport jax\n\ncompiled = functools.partial(jax.jit, static_argnames=(\"scale\",))\n"
    )
    (tree / "pipeline" / "common.py").write_text(
        "from os.path import *\nfrom .aliases import compiled\n\n\nclass Helper:\n    pass\n"
    )
    host = "@Helper\ndef host(x):\n    return x.unsafe_buffer_pointer()\n"
    (tree / "pipeline" / "step_a.py").write_text(
        "import jax\n\nfrom pipeline.common import Helper, compiled\n\n\n" + host
        + "\n\n@compiled\ndef step(scale, x):\n    return x.unsafe_buffer_pointer()\n"
    )
    (tree / "pipeline" / "step_b.py").write_text("import jax\n\nfrom pipeline.common import Helper\n\n\n" + host)
    parsed = []
    original = project_analysis._parse
    monkeypatch.setattr(project_analysis, "_parse", lambda text, path: parsed.append(path) or original(text, path))
    monkeypatch.setattr(project_analysis, "TREE_CACHE_CHARS", 0)
    _, document = run("--no-cache", "-j", "1", "--select", "JAX001", "pipeline/step_a.py", "pipeline/step_b.py")
    assert findings(document) == [("pipeline/step_a.py", 13, "JAX001")]
    assert parsed.count("pipeline/common.py") == 1 and parsed.count("pipeline/aliases.py") == 1


# A caller whose own DLPack call keeps its rules the same whatever the root holds, and whose
# helper does not exist yet: its name resolves to nothing, or to an attribute of a package.
EARLY_CALLER = """import jax
import numpy as np
import torch
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from {module} import to_torch

MESH = Mesh(np.array(jax.devices()[:4]), ("batch",))
batch = jax.device_put(np.ones((8, 4), np.float32), NamedSharding(MESH, PartitionSpec("batch")))
out = to_torch(batch)
local = torch.from_dlpack(np.ones(3))
"""


@pytest.mark.parametrize("module, added", [("helpers", "helpers.py"), ("pipeline.interop", "pipeline/interop.py")])
def test_a_module_added_that_answers_for_a_name_invalidates_the_cached_result(tree, tmp_path, module, added):
    (tree / "caller.py").write_text(EARLY_CALLER.format(module=module))
    cache = str(tmp_path / "cache")
    assert run("--cache-dir", cache, "caller.py")[1]["findings"] == []
    (tree / added).write_text("import torch\n\n\ndef to_torch(x):\n    return torch.from_dlpack(x)\n")
    project.forget_roots()
    warm, cold = run("--cache-dir", cache, "caller.py")[1], run("--no-cache", "caller.py")[1]
    assert findings(warm) == findings(cold) == [("caller.py", 10, "JAX002")]


def test_a_pool_finds_and_lists_the_roots_before_it_forks(tmp_path, monkeypatch):
    # `project.prepare` runs in the parent just before the pool forks: each root is listed there
    # once (the workers inherit it), and the gate's answers are those a worker finds alone.
    roots = [tmp_path / "a", tmp_path / "b"]
    for root in roots:
        (root / "pkg").mkdir(parents=True)
        (root / "pyproject.toml").write_text("[project]\nname = 'p'\n")
        (root / "pkg" / "__init__.py").write_text("")
        (root / "pkg" / "m.py").write_text("from pkg import n\n")
        (root / "pkg" / "n.py").write_text("import json\n")
    monkeypatch.chdir(tmp_path)
    files = [str(root / "pkg" / name) for root in roots for name in ("m.py", "n.py")]
    answers = []
    for prepared in (False, True):
        project.forget_roots()
        if prepared:
            project.prepare(files)
            assert sorted(project._listings) == sorted(map(str, roots))
        answers.append([place[0].may_import(Path(path).read_bytes(), place[1]) for path in files for place in [project.root_for(path)]])
    project.forget_roots()
    assert answers[0] == answers[1] == [True, False, True, False]
