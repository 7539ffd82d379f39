"""The version table (codemods/analysis/jax_versions.py) against the JAX that is installed.

Each environment of the CI matrix runs this with its own JAX, so every fact the table states
for the oldest supported and the newest release is observed on a real wheel: the table is
not trusted from memory. What JAX does is observed in a subprocess (CPU only), so this test
process never imports jax.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import cache

import pytest
from jax_codemod.analysis import jax_versions as jv

# About the installed JAX: the default target is not pinned (tests/conftest.py).
pytestmark = pytest.mark.target_unpinned

PROBE = r"""
import json, warnings
import numpy as np
import jax, jax.dlpack, jax.errors

out = {"version": jax.__version__}
x = jax.numpy.arange(4.0)

def outcome(fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn()
    except BaseException as error:
        return [type(error).__name__, [c.__name__ for c in type(error).__mro__]]
    return ["ok", []]

out["dl_device"] = {t: outcome(lambda t=t: x.__dlpack__(dl_device=(t, 0))) for t in range(0, 33)}
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    out["has_to_dlpack"] = hasattr(jax.dlpack, "to_dlpack")
out["to_dlpack_warns"] = any(issubclass(w.category, DeprecationWarning) for w in caught)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    out["from_capsule"] = outcome(lambda: jax.dlpack.from_dlpack(x.__dlpack__()))[0]
    jax.dlpack.from_dlpack(x.__dlpack__()) if out["from_capsule"] == "ok" else None
out["from_capsule_warns"] = any(issubclass(w.category, DeprecationWarning) for w in caught)
out["JaxRuntimeError"] = hasattr(jax.errors, "JaxRuntimeError")
out["XlaRuntimeError"] = hasattr(jax.errors, "XlaRuntimeError")
from jax.sharding import Mesh, NamedSharding, PartitionSpec
sharded = jax.device_put(jax.numpy.arange(4.0), NamedSharding(Mesh(jax.devices()[:2], ("x",)), PartitionSpec("x")))
out["runtime_error"] = outcome(sharded.unsafe_buffer_pointer)
def on_tracer(member, args):
    def body(t):
        value = getattr(t, member)
        value(*args) if args is not None else None
        return t
    return outcome(lambda: jax.jit(body)(x))
out["members"] = {m: on_tracer(m, a) for m, a in MEMBERS.items()}
out["make_mesh"] = hasattr(jax, "make_mesh")
out["shard_map"] = hasattr(jax, "shard_map")
out["jit_factory"] = outcome(lambda: jax.jit(static_argnums=0)(lambda n, y: y * n)(2, x))[0]
print(json.dumps(out))
"""


def _members() -> dict:
    """JAX001's concrete-only members of jax.Array: name -> call arguments (None: a property)."""
    from jax_codemod.rules import traced_concrete_access as jax001

    table = jax001.members_for(jv.installed())
    return {
        name: None if member.positional is None else [0] * member.positional[0]
        for name, member in table.items()
        if member.unless is None  # members traceable with a keyword (`nonzero(size=)`) are probed by JAX001
    }


@cache
def observed() -> dict:
    pytest.importorskip("jax")
    env = dict(os.environ, JAX_PLATFORMS="cpu", XLA_FLAGS="--xla_force_host_platform_device_count=2")
    done = subprocess.run([sys.executable, "-c", f"MEMBERS = {_members()!r}\n{PROBE}"], capture_output=True, text=True, env=env,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def seen():
    return observed()


@pytest.fixture(scope="module")
def version(seen):
    return jv.parse(seen["version"])


def test_installed_version_read_from_metadata_matches_the_imported_one(version):
    assert jv.installed() == version
    assert jv.default_target() == version


def test_the_matrix_stays_inside_the_known_range(version):
    assert jv.OLDEST_SUPPORTED <= version <= jv.NEWEST_KNOWN


def test_exportable_device_types(seen, version):
    # A type JAX maps to a platform either exports (cpu) or finds no backend (RuntimeError);
    # an unmapped type raises the version's "unsupported" error.
    mapped = {int(t) for t, (name, _) in seen["dl_device"].items() if name in ("ok", "RuntimeError")}
    assert mapped - {0} == jv.exportable_device_types(version)
    assert seen["dl_device"]["0"][0] == "ok"  # a zero type is ignored


def test_unsupported_device_error(seen, version):
    expected = jv.unsupported_device_error(version)
    unmapped = {t: name for t, (name, _) in seen["dl_device"].items() if name not in ("ok", "RuntimeError")}
    assert unmapped, "some device type must be unsupported"
    assert set(unmapped.values()) == {expected}
    assert expected in jv.dl_device_errors(version)


def test_fallback_catches_everything_a_dl_device_export_raises(seen):
    for t, (name, mro) in seen["dl_device"].items():
        if name != "ok":
            assert set(mro) & set(jv.DL_DEVICE_FALLBACK_ERRORS), (t, name, mro)


def test_to_dlpack(seen, version):
    assert seen["has_to_dlpack"] is not jv.has("dlpack.to_dlpack.removed", version)
    if seen["has_to_dlpack"]:
        assert seen["to_dlpack_warns"] is jv.has("dlpack.to_dlpack.deprecated", version)


def test_from_dlpack_capsule(seen, version):
    removed = jv.has("dlpack.from_dlpack_capsule.removed", version)
    assert (seen["from_capsule"] == "TypeError") is removed
    if not removed:
        assert seen["from_capsule"] == "ok"
        assert seen["from_capsule_warns"] is jv.has("dlpack.from_dlpack_capsule.deprecated", version)


@pytest.mark.parametrize(
    ("key", "field", "present_when_has"),
    [
        ("errors.JaxRuntimeError", "JaxRuntimeError", True),
        ("api.make_mesh", "make_mesh", True),
        ("api.shard_map", "shard_map", True),
    ],
)
def test_api_presence(seen, version, key, field, present_when_has):
    assert seen[field] is (jv.has(key, version) is present_when_has)


def test_runtime_error_class(seen, version):
    name, mro = seen["runtime_error"]
    assert name == ("JaxRuntimeError" if jv.has("errors.runtime_error_renamed", version) else "XlaRuntimeError")
    assert "RuntimeError" in mro
    assert seen["XlaRuntimeError"] is False


def test_jax001_members_are_concrete_only_on_this_jax(seen):
    # JAX001's table for this release holds: each member fails on a tracer (which error, exactly,
    # tests/test_traced_concrete_access.py::test_member_table_matches_installed_jax checks).
    assert seen["members"]
    for member, (name, _mro) in seen["members"].items():
        assert name != "ok", f"{member} works on a tracer in this JAX"


def test_jit_as_decorator_factory(seen, version):
    expected = "ok" if jv.has("api.jit_decorator_factory", version) else "TypeError"
    assert seen["jit_factory"] == expected


# The table itself, without JAX ------------------------------------------------------------


def test_parse_and_render():
    assert jv.parse("0.7") == (0, 7, 0)
    assert jv.parse("0.4.38") == (0, 4, 38)
    assert jv.parse("0.9.0.1") == (0, 9, 0, 1)
    assert jv.parse("0.5.0.dev20250101") == (0, 5, 0)
    assert jv.render((0, 7, 0)) == "0.7.0"
    with pytest.raises(ValueError, match="not a JAX version"):
        jv.parse("latest")


def test_target_reads_the_option():
    assert jv.target({jv.OPTION: "0.6"}) == jv.Range.single((0, 6, 0))
    assert jv.target({jv.OPTION: ">=0.6,<0.11"}) == jv.Range((0, 6, 0), (0, 11, 0))
    assert jv.target({}) == jv.Range.single(jv.default_target())


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0.7", "0.7.0"),
        ("0.4.38.dev2024", "0.4.38"),
        (">=0.4.30", ">=0.4.30"),
        (">= 0.6 , < 0.11", ">=0.6.0,<0.11.0"),
        ("<0.7", ">=0.4.30,<0.7.0"),  # the lower end is the oldest supported
        (">=0.4.20", ">=0.4.30"),
        ("<=0.7", ">=0.4.30,<=0.7.0"),
        ("~=0.6.1", ">=0.6.1,<0.7.0"),
        ("~=0.6", ">=0.6.0,<1.0.0"),
        ("==0.6.*", ">=0.6.0,<0.7.0"),
        ("==0.6.2", "0.6.2"),
        ("^0.6.1", ">=0.6.1,<0.7.0"),  # Poetry
        ("~0.6.1", ">=0.6.1,<0.7.0"),
        (">=0.5,!=0.7.0", ">=0.5.0"),  # one release out changes no behaviour the table knows
        (">=0.7.0rc1", ">=0.7.0"),
    ],
)
def test_parse_range(text, expected):
    assert str(jv.parse_range(text)) == expected


@pytest.mark.parametrize("text", ["latest", "<0.4.30", "<=0.4.29", ">=0.8,<0.7", "jax>=0.5", ">=0.6.*", ""])
def test_parse_range_refuses(text):
    with pytest.raises(ValueError):
        jv.parse_range(text)


def test_range_questions():
    old = jv.parse_range("<0.7")
    assert not old.has_anywhere("dlpack.to_dlpack.removed")
    assert old.has_anywhere("dlpack.to_dlpack.deprecated") and not old.has_everywhere("dlpack.to_dlpack.deprecated")
    wide = jv.parse_range(">=0.4.30")
    assert wide.has_anywhere("dlpack.to_dlpack.removed") and wide.first("dlpack.to_dlpack.removed") == (0, 7, 0)
    assert jv.parse_range(">=0.8").first("dlpack.to_dlpack.removed") == (0, 8, 0)
    assert jv.parse_range("<=0.7").has_anywhere("dlpack.to_dlpack.removed")  # 0.7.0 itself
    # one point per stretch on which the device table stays the same
    assert wide.points([(0, 10, 2), (0, 11, 0), (0, 4, 1)]) == [(0, 4, 30), (0, 10, 2), (0, 11, 0)]
    assert jv.exportable_from(wide) == {1: (0, 4, 30), 2: (0, 4, 30), 10: (0, 4, 30), 3: (0, 10, 2),
                                        11: (0, 11, 0), 14: (0, 11, 0), 20: (0, 11, 0)}
    assert jv.unsupported_device_errors(wide) == {"KeyError": (0, 4, 30), "BufferError": (0, 5, 1)}
    assert jv.unsupported_device_errors(jv.parse_range(">=0.6")) == {"BufferError": (0, 6, 0)}


def test_every_change_cites_a_source():
    for change in jv.CHANGES:
        assert change.source and change.what
        assert jv.OLDEST_SUPPORTED[:2] <= change.since[:2] <= jv.NEWEST_KNOWN


def test_device_tables_grow_monotonically():
    old, new = jv.exportable_device_types(jv.OLDEST_SUPPORTED), jv.exportable_device_types(jv.NEWEST_KNOWN)
    assert old == {1, 2, 10}
    assert old < jv.exportable_device_types((0, 10, 2)) < new
    assert {11, 14, 20} <= new
