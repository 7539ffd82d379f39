"""The project gate leaves out a rule whose gate cannot pass anywhere in the root (issue 55).

A rule may say what its ``project_prefilter`` needs somewhere (``project_needs``: words that the
file or some module of its root must hold); the engine then searches the root once a run
(``Root.holds_any``) and asks the rule nothing where none holds one. The answers must be the
ones the rule itself gives: these tests ask both ways.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from jax_codemod import RULES
from jax_codemod.analysis.project import Root
from jax_codemod.engine import pipeline, project
from jax_codemod.engine.pipeline import check_source, file_active_rules, project_active

DEFAULT = tuple(rule() for rule in RULES if rule.DEFAULT_ENABLED)
JAX002 = next(rule for rule in DEFAULT if rule.CODE == "JAX002")


def write(root: Path, files: dict[str, str | bytes]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(textwrap.dedent(text))
    project.forget_roots()
    return root


def root_of(tmp_path: Path) -> Root:
    return project.root_for(str(tmp_path / "any.py"))[0]


def test_a_root_holds_a_word_where_the_text_of_one_of_its_modules_does(tmp_path):
    write(tmp_path, {"a.py": "x = 1\n", "pkg/__init__.py": "", "pkg/b.py": "def f(x):\n    return x.__dlpack__()\n"})
    assert root_of(tmp_path).holds_any((b"dlpack",))
    assert not root_of(tmp_path).holds_any((b"unsafe_buffer_pointer", b"device_put"))


def test_a_module_in_an_encoding_that_spells_ascii_otherwise_is_read_as_its_text(tmp_path):
    # `# coding: utf-7` spells `d` as `+AGQ-`: the bytes hold no `dlpack`, the text Python reads does.
    data = b"# coding: utf-7\ndef f(x):\n    return x.__+AGQ-lpack__()\n"
    assert b"dlpack" not in data and "dlpack" in data.decode("utf-7")
    write(tmp_path, {"a.py": data})
    assert root_of(tmp_path).holds_any((b"dlpack",))
    # Declared UTF-8 (or another encoding that keeps ASCII as it is) is searched in its bytes.
    write(tmp_path, {"a.py": "# -*- coding: utf-8 -*-\nname = 'caf\u00e9'\n"})
    assert not root_of(tmp_path).holds_any((b"dlpack",))


def test_a_module_too_large_to_read_holds_nothing_and_undecodable_bytes_are_searched(tmp_path, monkeypatch):
    write(tmp_path, {"big.py": "x = 'dlpack'\n" * 10, "b.py": b"x = '\xff dlpack'\n"})
    monkeypatch.setattr(project, "MAX_MODULE_BYTES", 100)  # big.py: over the limit, read by no question
    root = root_of(tmp_path)
    assert root._module_holds("big.py", [(b"dlpack",)]) == []
    # b.py is no UTF-8, so no question reads its text either; its bytes hold the word: a
    # question more, never one less.
    assert root._module_holds("b.py", [(b"dlpack",), (b"jax",)]) == [(b"dlpack",)]


HELPERS = {
    "interop/__init__.py": "from interop.convert import to_torch\n",
    "interop/convert.py": """\
        import torch

        def to_torch(x):
            return torch.from_dlpack(x)
    """,
    "data.py": """\
        import jax
        from jax.sharding import NamedSharding

        def make_batch(x, sharding: NamedSharding):
            return jax.device_put(x, sharding)
    """,
}
QUIET = {
    "interop/__init__.py": "from interop.convert import to_host\n",
    "interop/convert.py": "import numpy as np\n\ndef to_host(x):\n    return np.asarray(x)\n",
    "data.py": HELPERS["data.py"],
}
CALLERS = {
    "a.py": "import jax\nfrom jax.sharding import NamedSharding\nfrom interop import to_torch\nto_torch(x)\n",
    "b.py": "from data import make_batch\nfrom interop import to_torch\nto_torch(make_batch(1, s))\n",
    "c.py": "import torch\nfrom data import make_batch\nt = torch.as_tensor(make_batch(1, s))\n",
    "d.py": "from interop import to_torch\nto_torch(x)\n",
}


# JAX001's gate (issue 34): a traced function calling another module's helper that reads a
# concrete-only member, or decorated with another module's transform alias; and roots without
# any library a transform is spelled from, whose gate may pass on text alone (`@compiled` from a
# module that decorates with another import) where no transform can resolve.
TRACED_HELPERS = {
    "interop/__init__.py": "from interop.host import to_host\n",
    "interop/host.py": "def to_host(x):\n    return x.item()\n",
    "compile.py": "import jax\n\ncompiled = jax.jit\n",
}
NO_LIBRARY = {
    "interop/__init__.py": "from interop.host import to_host\n",
    "interop/host.py": "from deco import wrap\n\n@wrap\ndef to_host(x):\n    return x.item()\n",
    "compile.py": "from deco import wrap\n\n@wrap\ndef compiled(f):\n    return f\n",
    "deco.py": "def wrap(f):\n    return f\n",
}
TRACING_CALLERS = {
    "e.py": "import jax\nfrom interop import to_host\n\n@jax.jit\ndef f(x):\n    return to_host(x)\n",
    "g.py": "from compile import compiled\nfrom interop import to_host\n\n@compiled\ndef f(x):\n    return to_host(x)\n",
    "h.py": "from compile import compiled\n\n@compiled\ndef f(x):\n    return x.item()\n",
}


@pytest.mark.parametrize(
    ("helpers", "caller"),
    [(helpers, caller) for helpers in (HELPERS, QUIET) for caller in sorted(CALLERS)]
    + [(helpers, caller) for helpers in (TRACED_HELPERS, NO_LIBRARY) for caller in sorted(TRACING_CALLERS)],
)
def test_the_gate_answers_as_the_rules_own_prefilter_does(tmp_path, monkeypatch, helpers, caller):
    write(tmp_path, {**helpers, caller: {**CALLERS, **TRACING_CALLERS}[caller]})
    path = tmp_path / caller
    source = path.read_bytes()
    active = pipeline.active_rules(source, DEFAULT)
    found = {rule.CODE for rule in project_active(str(path), source, DEFAULT, active)}
    # The rules asked without the root's search: the same answer, but where no module spells a
    # library a transform comes from (JAX001's needs), which the analysis proves has no finding.
    project.forget_roots()
    monkeypatch.setattr(pipeline, "_may_pass_all", lambda waiting, *_args: waiting)
    asked = {rule.CODE for rule in project_active(str(path), source, DEFAULT, active)}
    if helpers is NO_LIBRARY and b"jax" not in source:
        # What the rules' own gates may let through here, the analysis finds nothing in.
        assert "JAX001" not in found and found <= asked
        chosen = tuple(rule for rule in DEFAULT if rule.CODE in asked)
        assert not check_source(source, str(path), chosen)[1], "no transform resolves without jax, flax or equinox"
    else:
        assert found == asked
    if helpers is TRACED_HELPERS and caller != "h.py":
        assert "JAX001" in found  # a traced call into another module's access passes the gate


def test_no_rule_is_imported_for_a_root_without_what_the_gates_need(tmp_path):
    """A package importing itself, with the text of JAX001's and JAX002's triggers but no JAX:
    the gate answers from the manifest's ``PROJECT_NEEDS`` and one search of the root, and no
    rule module is imported (black, libcst: the import cost more than the rest of the run)."""
    write(tmp_path, {
        "pkg/__init__.py": "from pkg.core import run\n",
        "pkg/core.py": "def run(x):\n    return x.item(), x.tolist(), memoryview(x)\n",
        "pkg/cli.py": "from pkg import run\nfrom pkg.core import run as again\nprint(run(1).format(), again(2))\n",
    })
    code = (
        "import sys\nfrom jax_codemod.cli.main import main\n"
        "rc = main(['run', '--check', '--no-cache', '-j', '1', '.'])\n"
        "print(sorted(m for m in sys.modules if m.startswith('jax_codemod.rules')))\n"
        "sys.exit(rc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
    # The same package once a module spells jax: the gate asks JAX001 (and so imports it).
    (tmp_path / "pkg" / "cli.py").write_text("import jax\nfrom pkg import run\njax.jit(run)(1)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert "jax_codemod.rules.traced_concrete_access" in done.stdout.strip().splitlines()[-1]


def test_the_manifest_says_each_rules_needs_without_importing_it():
    from jax_codemod.registry import MANIFEST, LazyRule

    for info in MANIFEST:
        lazy = LazyRule(info, {})
        rule = next(rule for rule in DEFAULT + tuple(r() for r in RULES if not r.DEFAULT_ENABLED) if rule.CODE == info.CODE)
        own = getattr(rule, "project_needs", None)
        assert (own() if own else None) == (lazy.project_needs() if info.PROJECT_NEEDS is not None else None)
        assert lazy._rule is None


def test_a_rule_is_not_asked_where_neither_the_file_nor_its_root_holds_what_it_needs(tmp_path, monkeypatch):
    write(tmp_path, QUIET)
    asked: list[str] = []
    real = type(JAX002).project_prefilter

    def spy(self, source, view):
        asked.append(view.path)
        return real(self, source, view)

    monkeypatch.setattr(type(JAX002), "project_prefilter", spy)
    caller = "from data import make_batch\nfrom interop import to_host\nto_host(make_batch(1, s))\n"
    (tmp_path / "b.py").write_text(caller)
    project.forget_roots()
    assert "JAX002" not in {rule.CODE for rule in file_active_rules(str(tmp_path / "b.py"), caller.encode(), DEFAULT)}
    assert asked == []  # no module of the root holds export text, the file no trigger
    # A module with export text anywhere in the root (not one the file imports): the rule is asked.
    (tmp_path / "elsewhere.py").write_text("def f(x):\n    return x.__dlpack__()\n")
    project.forget_roots()
    assert "JAX002" not in {rule.CODE for rule in file_active_rules(str(tmp_path / "b.py"), caller.encode(), DEFAULT)}
    assert asked == ["b.py"]
    # A trigger in the file itself: asked too, whatever the root holds.
    (tmp_path / "elsewhere.py").unlink()
    project.forget_roots()
    asked.clear()
    with_trigger = caller + "import torch\nt = torch.as_tensor(y)\n"
    (tmp_path / "b.py").write_text(with_trigger)
    file_active_rules(str(tmp_path / "b.py"), with_trigger.encode(), DEFAULT)
    assert asked == ["b.py"]


def test_the_root_is_searched_once_a_run(tmp_path, monkeypatch):
    write(tmp_path, {**QUIET, **{f"m{n}.py": "from interop import to_host\nto_host(1)\n" for n in range(5)}})
    reads: list[str] = []
    real = project.read_raw

    def counted(top, relative):
        reads.append(relative)
        return real(top, relative)

    monkeypatch.setattr(project, "read_raw", counted)
    for n in range(5):
        path = tmp_path / f"m{n}.py"
        file_active_rules(str(path), path.read_bytes(), DEFAULT)
    assert sorted(reads) == sorted(set(reads))  # each module read once, for all the files
    assert len(reads) == len(project.list_files(str(tmp_path)))
