"""The one resolver (analysis/names.py): the canonical spelling of a name, checked against the
installed JAX, and what an expression names through imports, scopes, `getattr` and
`importlib.import_module`."""

from __future__ import annotations

import ast
import importlib
import types
import warnings
from pathlib import Path

import pytest
from jax_codemod.analysis import names
from jax_codemod.analysis.context import FileContext

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    ("spelled", "public"),
    [
        # Decision (issue 29): `jax._src.pjit.pjit` is pjit, a jit (values called it `jax.pjit`,
        # which names nothing; tests/snapshots/sharded_dlpack_export/rewrite_private_pjit.py).
        ("jax._src.pjit.pjit", "jax.experimental.pjit.pjit"),
        ("jax._src.pjit.with_sharding_constraint", "jax.lax.with_sharding_constraint"),
        # Decision: `jax.remat` is `jax.checkpoint` to every rule (JAX001 kept `jax.remat`).
        ("jax.remat", "jax.checkpoint"),
        ("jax._src.ad_checkpoint.remat", "jax.checkpoint"),
        # Decision: one pytree map, `jax.tree_util.tree_map` (JAX001 kept `jax.tree.map`).
        ("jax.tree.map", "jax.tree_util.tree_map"),
        ("jax._src.tree.map", "jax.tree_util.tree_map"),
        ("jax.tree_map", "jax.tree_util.tree_map"),
        ("jax._src.api.jit", "jax.jit"),
        ("jax._src.dlpack.to_dlpack", "jax.dlpack.to_dlpack"),
        ("jax._src.lax.control_flow.loops.scan", "jax.lax.scan"),
        ("jax.experimental.shard_map.shard_map", "jax.shard_map"),
        ("flax.experimental.nnx.jit", "flax.nnx.jit"),
        ("flax.linen.transforms.vmap", "flax.linen.vmap"),
        ("equinox._jit.filter_jit", "equinox.filter_jit"),
        ("torch.to_dlpack", "torch.utils.dlpack.to_dlpack"),
        ("jax.numpy.ndarray", "jax.Array"),
        ("jax.sharding.use_mesh", "jax.set_mesh"),
        ("jax.P", "jax.sharding.PartitionSpec"),
        ("jax.numpy.zeros", "jax.numpy.zeros"),
        ("jax._src.lax.lax.map", "jax._src.lax.lax.map"),  # safe_map, not jax.lax.map
        (None, None),
    ],
)
def test_canonical(spelled, public):
    assert names.canonical(spelled) == public


def _object(qualified: str):
    parts = qualified.split(".")
    for end in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:end]))
        except ImportError:
            continue
        try:
            for part in parts[end:]:
                found = getattr(found, part)
        except AttributeError:
            return None
        return found
    return None


# Public names that are the same function or class in another wrapper or alias: JAX's own
# `jax.tree.*` wrappers of `jax.tree_util`, `remat` of `checkpoint`, the array class's
# implementation, and the device and shard classes of basearray's annotations. Before 0.5 (seen
# on 0.4.30): `jax.checkpoint` is `ad_checkpoint.checkpoint_wrapper`, a thin wrapper of
# `checkpoint`, and `jax.experimental.shard_map` has a `pmap` of its own, built on shard_map,
# that traces its function and places the result over the devices as `jax.pmap` does (from 0.6,
# `jax._src.shard_map.pmap`). From 0.6.1 to 0.7.x `jax.experimental.shard_map.shard_map` is the
# legacy wrapper of `jax.shard_map` (the old keyword names): the same transform to the analysis.
EQUIVALENT = {
    "jax._src.shard_map.pmap",
    "jax.experimental.shard_map.shard_map",
    "jax._src.ad_checkpoint.remat",
    "jax._src.ad_checkpoint.checkpoint",
    "jax.experimental.shard_map.pmap",
    "jax._src.array.ArrayImpl",
    "jax._src.basearray.Device",
    "jax._src.basearray.Shard",
    *(f"jax._src.tree.{name}" for name in ("map", "leaves", "flatten", "leaves_with_path", "flatten_with_path")),
}


@pytest.mark.parametrize("prefix", [p for p in names._PREFIXES if p.startswith("jax.")])
def test_a_module_prefix_maps_each_member_to_itself(prefix):
    """Every member of a private module that the canonical name maps to a public name that
    exists is that object (or a documented equivalent): a prefix maps only re-exports."""
    pytest.importorskip("jax")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        module = _object(prefix[:-1])
        if not isinstance(module, types.ModuleType):
            pytest.skip(f"{prefix[:-1]} is not in this JAX")
        wrong = []
        for member in dir(module):
            if member.startswith("_"):
                continue
            private = f"{prefix}{member}"
            public = names.canonical(private)
            value = getattr(module, member)
            if public == private or private in EQUIVALENT or isinstance(value, types.ModuleType):
                continue
            found = _object(public)
            if found is not None and found is not value:
                wrong.append(f"{private} -> {public}")
    assert not wrong


def test_private_pjit_is_pjit():
    pytest.importorskip("jax")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        private = _object("jax._src.pjit.pjit")
        if private is None:
            pytest.skip("no jax._src.pjit.pjit in this JAX")
        assert _object(names.canonical("jax._src.pjit.pjit")) is private


def _resolved(source: str) -> dict[str, str | None]:
    """``name = <expr>`` lines of the last function -> what the resolver says of <expr>."""
    ctx = FileContext("t.py", source, ast.parse(source))
    function = [n for n in ctx.tree.body if isinstance(n, ast.FunctionDef)][-1]
    return {
        statement.targets[0].id: ctx.analysis.qualname(statement.value)
        for statement in function.body
        if isinstance(statement, ast.Assign)
    }


def test_resolver_follows_getattr_and_import_module():
    found = _resolved(
        "import importlib\n"
        "import jax\n"
        "import jax.dlpack as dl\n"
        "def f():\n"
        "    a = getattr(jax.dlpack, 'to_dlpack')\n"
        "    b = getattr(jax.dlpack, 'to_dlpack', None)\n"  # a version gate, not an alias
        "    c = importlib.import_module('jax._src.dlpack').to_dlpack\n"
        "    d = importlib.import_module('jax.dlpack')\n"
        "    e = getattr(importlib.import_module('jax'), 'remat')\n"
        "    g = dl.to_dlpack\n"
        "    h = getattr(jax, name)\n"
        "    i = importlib.import_module('.local')\n"
        "    j = importlib.import_module('jax.numpy', package='pkg').zeros\n"  # absolute: no anchor
        "    k = importlib.import_module('jax.numpy', 'pkg', 'extra')\n"
    )
    assert found == {
        "a": "jax.dlpack.to_dlpack",
        "b": None,
        "c": "jax.dlpack.to_dlpack",
        "d": "jax.dlpack",
        "e": "jax.checkpoint",
        "g": "jax.dlpack.to_dlpack",
        "h": None,
        "i": None,
        "j": "jax.numpy.zeros",
        "k": None,
    }


def test_resolver_knows_scopes_and_local_aliases():
    found = _resolved(
        "import importlib\n"
        "import jax\n"
        "import jax.numpy as jnp\n"
        "def f(jnp):\n"
        "    m = importlib.import_module('jax.dlpack')\n"
        "    a = jnp.zeros\n"  # the parameter shadows the import
        "    b = m.from_dlpack\n"
        "    c = jax.tree.map\n"
    )
    assert found == {"m": "jax.dlpack", "a": None, "b": "jax.dlpack.from_dlpack", "c": "jax.tree_util.tree_map"}


def test_the_import_only_answer_keeps_the_spelling():
    text = "from jax._src import dlpack as d\nx = d.to_dlpack\n"
    ctx = FileContext("t.py", text, ast.parse(text))
    value = ctx.tree.body[1].value
    assert ctx.qualname(value) == "jax._src.dlpack.to_dlpack"
    assert ctx.analysis.qualname(value) == "jax.dlpack.to_dlpack"


def test_one_resolver():
    """No module but names.py maps spellings or resolves a call's target name itself."""
    for path in sorted((ROOT / "codemods").rglob("*.py")):
        if path.name == "names.py":
            continue
        tree = ast.parse(path.read_text())
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                assert node.name not in ("public", "public_name", "canonical"), f"{path}: {node.name}"
            targets = node.targets if isinstance(node, ast.Assign) else []
            for target in targets:
                assert getattr(target, "id", None) not in (
                    "_RENAMES",
                    "_PRIVATE_PREFIXES",
                    "_PUBLIC_ALIASES",
                    "_RENAMED",
                ), f"{path}: a spelling map"
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef):
                assert node.name not in ("_module_call", "_resolve"), f"{path}: {node.name}"


def test_one_transform_record():
    from jax_codemod.analysis import transforms, values

    assert values.Transform is transforms.Transform
    defined = [
        path
        for path in sorted((ROOT / "codemods").rglob("*.py"))
        if any(isinstance(n, ast.ClassDef) and n.name == "Transform" for n in ast.parse(path.read_text()).body)
    ]
    assert defined == [ROOT / "codemods" / "analysis" / "transforms.py"]


def test_a_remat_function_is_reported_as_under_checkpoint():
    """Decision (issue 29): JAX001 names `@jax.remat` by its one canonical name, `jax.checkpoint`
    (tests/snapshots/traced_concrete_access/report_remat_alias.py)."""
    from jax_codemod.engine.pipeline import check_source
    from jax_codemod.rules.traced_concrete_access import TracedConcreteAccess

    path = ROOT / "tests" / "snapshots" / "traced_concrete_access" / "report_remat_alias.py"
    _, findings = check_source(path.read_bytes(), path.name, (TracedConcreteAccess(),))
    assert [f.message.split(";")[0] for f in findings] == [
        "`x.unsafe_buffer_pointer()` needs a concrete array, but `x` is a tracer inside `jax.checkpoint`"
    ]


def test_spelled_keeps_the_files_spelling_with_the_same_reach():
    """What a message quotes: the private spelling, through a call as well as an import."""
    source = (
        "import importlib\n"
        "import jax._src.dlpack\n"
        "def f():\n"
        "    a = importlib.import_module('jax._src.dlpack').to_dlpack\n"
        "    b = getattr(jax._src.dlpack, 'to_dlpack')\n"
        "    c = jax._src.dlpack.to_dlpack\n"
        "def g():\n"
        "    from jax._src.dlpack import to_dlpack\n"  # a function's own import
        "    d = to_dlpack\n"
    )
    ctx = FileContext("t.py", source, ast.parse(source))
    values = [s.value for f in ctx.tree.body[-2:] for s in f.body if isinstance(s, ast.Assign)]
    assert [ctx.analysis.names.spelled(value) for value in values] == ["jax._src.dlpack.to_dlpack"] * 4
    assert [ctx.analysis.qualname(value) for value in values] == ["jax.dlpack.to_dlpack"] * 4
