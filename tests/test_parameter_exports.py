"""JAX002 asks another module's exports only where one can take a parameter (issue 55).

``through_exports`` reports a multi-device value handed to another module's function that exports
the parameter it arrives in, or a field of an instance it was built with. Its only source is an
export, in some module of the project, whose value is a parameter (or a parameter's attribute)
that the module does not guard: ``holds_parameter_export`` says from a module's text (and its
blocks, for ``project.reaches``) whether it has one, and where none is reachable neither the gate
nor the check values the file's calls (EasyDeL's one export module guards its parameter: half of
its cold run). The predicate must hold wherever the check could find something: these tests
give it every form of export a finding can come from, and check the findings both ways.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner
from jax_codemod import RULES
from jax_codemod.analysis.project import MAX_PARSED_CHARS
from jax_codemod.cli.main import main
from jax_codemod.engine import project
from jax_codemod.engine.pipeline import file_active_rules
from jax_codemod.rules._dlpack_exports import _export_candidates, _export_lines, find_exports, holds_parameter_export

DEFAULT = tuple(rule() for rule in RULES if rule.DEFAULT_ENABLED)


def module(text: str) -> str:
    return textwrap.dedent(text)


# The predicate ------------------------------------------------------------------------------

EXPORTING = {
    "consumer": """\
        import torch

        def to_torch(x):
            return torch.from_dlpack(x)
    """,
    "method_call": """\
        def export(x):
            return x.__dlpack__()
    """,
    "pointer": """\
        def pointer(x):
            return x.unsafe_buffer_pointer()
    """,
    "pointer_attribute": """\
        def interface(x):
            return x.__cuda_array_interface__
    """,
    "alias_of_the_parameter": """\
        import numpy as np

        def to_host(x):
            y = x
            return np.from_dlpack(y)
    """,
    "field": """\
        import torch

        class Exporter:
            def __init__(self, arr):
                self.arr = arr

            def export(self):
                return torch.from_dlpack(self.arr)
    """,
    "leaves": """\
        import jax
        import torch

        def to_torch(tree):
            return jax.tree.map(torch.from_dlpack, tree)
    """,
    "elements": """\
        import torch

        def to_torch(arrays):
            return list(map(torch.from_dlpack, arrays))
    """,
    "run_by_a_pool": """\
        import torch

        def to_torch(pool, x):
            return pool.submit(torch.from_dlpack, x).result()
    """,
    "keyword": """\
        import torch

        def to_torch(*, array):
            return torch.utils.dlpack.from_dlpack(ext_tensor=array)
    """,
    # Handled by a try only the names of its imports say catch it (or by the callers): whether it
    # does is the check's to say; the predicate reads no name's meaning.
    "caught": """\
        import torch

        def to_torch(x):
            try:
                return torch.from_dlpack(x)
            except BufferError:
                return None
    """,
    # A conversion in a module that spells export text (``_module_exports`` reads no other).
    "conversion": """\
        import torch

        def to_torch(x):
            return torch.as_tensor(x)  # reads it as torch.from_dlpack would
    """,
}

NOT_EXPORTING = {
    "devices_inspected": """\
        from jax import dlpack

        def to_torch(x):
            capsule = dlpack.to_dlpack(x, src_device=next(iter(x.devices())))
            return capsule
    """,
    "sharding_tested": """\
        import torch

        def to_torch(x):
            if len(x.sharding.device_set) > 1:
                raise ValueError("gather first")
            return torch.from_dlpack(x)
    """,
    "a_local_value": """\
        import jax.numpy as jnp
        import torch

        def make():
            x = jnp.zeros(3)
            return torch.from_dlpack(x)
    """,
    "a_closure_reads_the_outer_parameter": """\
        import torch

        def outer(x):
            def inner():
                return torch.from_dlpack(x)
            return inner
    """,
    "no_export_text": """\
        def double(x):
            return x * 2
    """,
    "only_a_definition_and_a_docstring": """\
        def from_dlpack(x):
            '''Like `numpy.from_dlpack`.'''
            return x
    """,
    # ...and in one that spells none, no export the check reads of another module.
    "conversion_without_export_text": """\
        import torch

        def to_torch(x):
            return torch.as_tensor(x)
    """,
    "unparsable": """\
        def to_torch(x):
            return torch.from_dlpack(x
    """,
}


@pytest.mark.parametrize("name", sorted(EXPORTING))
def test_a_module_that_exports_a_parameter_is_one(name):
    assert holds_parameter_export(module(EXPORTING[name]))


@pytest.mark.parametrize("name", sorted(NOT_EXPORTING))
def test_a_module_whose_exports_take_no_unguarded_parameter_is_none(name):
    assert not holds_parameter_export(module(NOT_EXPORTING[name]))


def test_a_module_too_long_for_the_analysis_to_read_is_none():
    # analysis.project parses no module this long (its values are a library's): nothing of it is
    # followed, so nothing of it is exported through a call.
    text = module(EXPORTING["consumer"]) + "#" * MAX_PARSED_CHARS + "\n"
    assert not holds_parameter_export(text)


def test_the_block_that_holds_the_export_is_the_one_found():
    text = module("""\
        import torch

        def quiet(x):
            return x * 2

        def to_torch(x):
            return torch.from_dlpack(x)

        LIMIT = 3
    """)
    quiet, to_torch, limit = text.index("def quiet"), text.index("def to_torch"), text.index("LIMIT")
    assert not holds_parameter_export.in_block(text, quiet, to_torch)
    assert holds_parameter_export.in_block(text, to_torch, limit)
    assert not holds_parameter_export.in_block(text, limit, len(text))
    # Lines end in CR alone too (old Mac files), as Python counts them.
    cr = text.replace("\n", "\r")
    assert holds_parameter_export.in_block(cr, to_torch, limit)
    assert not holds_parameter_export.in_block(cr, quiet, to_torch)


@pytest.mark.parametrize("text", [*EXPORTING.values(), *NOT_EXPORTING.values()])
def test_the_candidates_hold_every_export_the_check_finds(text):
    """Every export ``find_exports`` finds is among the predicate's candidates (value, site,
    pointer): a finding's export is never one the predicate did not look at."""
    import ast

    from jax_codemod.analysis.context import FileContext

    text = module(text)
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return
    found = {(id(e.value), id(e.site), e.pointer) for e in find_exports(FileContext("m.py", text, tree))}
    candidates = {(id(e.value), id(e.site), e.pointer) for e in _export_candidates(tree, _export_lines(text))}
    assert found <= candidates


# Both ways through the engine ---------------------------------------------------------------

PLACED = textwrap.dedent("""\
    import jax
    import jax.numpy as jnp
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    MESH = Mesh(jax.devices(), ("x",))
    batch = jax.device_put(jnp.zeros((8, 2)), NamedSharding(MESH, P("x")))
""")

GUARDED = """\
    from jax import dlpack

    def to_capsule(x):
        return dlpack.to_dlpack(x, src_device=next(iter(x.devices())))
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


def findings(root: Path) -> set[tuple[str, int]]:
    with CliRunner().isolation() as (out, err, _):
        code = main(["run", "--dry-run", "--no-cache", "--no-progress", "--format", "json", "--select", "JAX002", str(root)])
        text = out.getvalue().decode()
    assert code in (0, 1), err.getvalue().decode()
    return {(Path(f["path"]).name, f["line"]) for f in json.loads(text)["findings"]}


def jax002_active(root: Path, name: str) -> bool:
    path = root / name
    project.forget_roots()
    return any(rule.CODE == "JAX002" for rule in file_active_rules(str(path), path.read_bytes(), DEFAULT))


def test_a_root_whose_only_export_is_guarded_is_not_asked_of_the_files_that_call_into_it(tmp_path):
    root = write(tmp_path, {
        "interop.py": GUARDED,
        "main.py": PLACED + "from interop import to_capsule\n\ncapsule = to_capsule(batch)\n",
    })
    assert not jax002_active(root, "main.py")
    assert findings(root) == set()
    # The same call, once the helper exports its parameter unguarded: asked, and reported.
    (root / "interop.py").write_text("import torch\n\ndef to_capsule(x):\n    return torch.from_dlpack(x)\n")
    assert jax002_active(root, "main.py")
    assert findings(root) == {("main.py", PLACED.count("\n") + 3)}


HANDED_ON = {
    # A module without export text hands the parameter on to one that exports it.
    "relay": (
        {"relay.py": "from exporters import to_torch\n\ndef relay(value):\n    return to_torch(value)\n"},
        "from relay import relay\n\nrelay(batch)\n",
    ),
    # A field of an instance built here, exported by a method of the class's module.
    "field": (
        {"holders.py": EXPORTING["field"]},
        "from holders import Exporter\n\nExporter(batch).export()\n",
    ),
    # A tree whose leaves the callee exports (reported, without a fix).
    "leaves": (
        {"trees.py": EXPORTING["leaves"]},
        "from trees import to_torch\n\nto_torch({'a': batch})\n",
    ),
    # A package imported whole, the function read through it.
    "package": (
        {"pkg/__init__.py": "", "pkg/interop.py": EXPORTING["consumer"]},
        "import pkg.interop\n\npkg.interop.to_torch(batch)\n",
    ),
}


@pytest.mark.parametrize("name", sorted(HANDED_ON))
def test_an_export_of_a_parameter_anywhere_a_call_leads_is_still_found(tmp_path, name):
    helpers, calls = HANDED_ON[name]
    # Beside an export module whose only export is guarded: one module that exports a parameter
    # is enough for the question to be asked.
    root = write(tmp_path, {
        "guarded.py": GUARDED,
        "exporters.py": EXPORTING["consumer"],
        **helpers,
        "main.py": PLACED + calls,
    })
    assert jax002_active(root, "main.py")
    assert findings(root) == {("main.py", PLACED.count("\n") + 3)}


def test_a_file_with_an_export_of_its_own_is_checked_whatever_the_other_modules_export(tmp_path):
    # `tensor(batch)` spells no trigger of JAX002's prefilter (`torch.tensor(`), so only the project
    # gate passes the file; its own export is found by the check, not through another module.
    root = write(tmp_path, {
        "interop.py": GUARDED,
        "main.py": PLACED + "from torch import tensor\nfrom interop import to_capsule\n\nt = tensor(batch)\n",
    })
    assert jax002_active(root, "main.py")
    assert findings(root) == {("main.py", PLACED.count("\n") + 4)}


@pytest.mark.parametrize("own_export", [False, True])
def test_a_cached_answer_does_not_survive_the_helper_starting_to_export_its_parameter(tmp_path, monkeypatch, own_export):
    # The file was passed over (the gate) or checked without its calls (``through_exports``)
    # while the helper guarded its parameter: once the helper exports it unguarded, the file's
    # cached answer must go, whichever the helper is, and in the pool as alone.
    calls = "from interop import to_capsule\n\ncapsule = to_capsule(batch)\n"
    own = "\ndef own(x):\n    return x.__dlpack__()\n" if own_export else ""
    root = write(tmp_path, {"interop.py": GUARDED, "main.py": PLACED + calls + own})
    monkeypatch.chdir(root)
    cache = str(tmp_path / "cache")
    for args in (["-j", "1"], ["-j", "2"]):
        with CliRunner().isolation():
            for _ in range(2):
                assert main(["run", "--check", "--cache-dir", cache, "--select", "JAX002", *args, str(root)]) == 0
    (root / "interop.py").write_text("import torch\n\ndef to_capsule(x):\n    return torch.from_dlpack(x)\n")
    project.forget_roots()
    with CliRunner().isolation():
        assert main(["run", "--check", "--cache-dir", cache, "--select", "JAX002", str(root)]) == 1
    assert findings(root) == {("main.py", PLACED.count("\n") + 3)}
