"""JAX003 against the installed libraries: its device table, every member, no false positives."""

from __future__ import annotations

import subprocess
import sys

import pytest
from jax_codemod.analysis import jax_versions
from jax_codemod.engine.pipeline import Settings, process_source
from jax_codemod.rules.unsupported_dl_device import (
    DL_DEVICE_TYPES,
    UnsupportedDlDevice,
)

# About the installed JAX: the default target is not pinned (tests/conftest.py).
pytestmark = pytest.mark.target_unpinned

# The rule's default target is the installed JAX; tests/test_jax_versions.py checks this table
# against that JAX's behaviour for every device type.
JAX_EXPORTABLE_DEVICE_TYPES = jax_versions.exportable_device_types(jax_versions.default_target())


def _run(code: str) -> str:
    # Ask the installed libraries in a fresh interpreter, so this process stays free of them.
    done = subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
        env={"JAX_PLATFORMS": "cpu", "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


def test_the_tool_imports_neither_jax_nor_torch():
    loaded = _run("import sys, jax_codemod; print(sorted({'jax', 'torch'} & set(sys.modules)))")
    assert loaded == "[]"


def test_table_matches_installed_jax():
    if jax_versions.default_target() < (0, 5, 1):
        pytest.skip("before 0.5.1 the table is a literal inside to_dlpack (tests/test_jax_versions.py probes it)")
    keys = _run("from jax._src.dlpack import _DL_DEVICE_TO_PLATFORM as m; print(sorted(int(k) for k in m))")
    assert sorted(JAX_EXPORTABLE_DEVICE_TYPES) == eval(keys)


def test_member_names_match_torch():
    members = _run(
        "from torch.utils.dlpack import DLDeviceType as D; print({k: int(v) for k, v in D.__members__.items()})"
    )
    assert DL_DEVICE_TYPES == eval(members)


def test_every_unsupported_type_raises_in_jax():
    unsupported = sorted(set(DL_DEVICE_TYPES.values()) - JAX_EXPORTABLE_DEVICE_TYPES)
    code = (
        "import jax.numpy as jnp\n"
        "x = jnp.ones(2)\n"
        "raised = []\n"
        f"for t in {unsupported}:\n"
        "    try:\n"
        "        x.__dlpack__(dl_device=(t, 0))\n"
        f"    except {jax_versions.unsupported_device_error(jax_versions.default_target())} as e:\n"
        "        raised.append(t) if 'unsupported device type' in str(e) or str(int(t)) in str(e) else None\n"
        "print(raised)\n"
    )
    assert eval(_run(code)) == unsupported


SPELLINGS = {
    "torch enum": ("from torch.utils.dlpack import DLDeviceType", "DLDeviceType.{name}"),
    "qualified": ("import torch.utils.dlpack", "torch.utils.dlpack.DLDeviceType.{name}"),
    "bare int": ("", "{value}"),
    "constant": ("from torch.utils.dlpack import DLDeviceType\nKIND = DLDeviceType.{name}", "KIND"),
}


@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize("name", DL_DEVICE_TYPES)
def test_flagged_exactly_when_jax_cannot_export(name, spelling):
    prelude, expression = SPELLINGS[spelling]
    value = DL_DEVICE_TYPES[name]
    source = (
        f"import jax.numpy as jnp\n{prelude.format(name=name)}\n"
        f"c = jnp.ones(2).__dlpack__(dl_device=({expression.format(name=name, value=value)}, 0))\n"
    )
    result = process_source(source.encode(), "m.py", Settings(rules=(UnsupportedDlDevice(),)))
    if value in JAX_EXPORTABLE_DEVICE_TYPES:
        assert result.findings == [] and not result.changed
    else:
        assert [f.fix.value for f in result.findings] == ["safe"]
        assert f"({name})" in result.findings[0].message
        assert result.fixed.decode().endswith("c = jnp.ones(2).__dlpack__()\n")


def test_suppression_comment_keeps_the_call():
    source = (
        b"import jax.numpy as jnp\nc = jnp.ones(2).__dlpack__(dl_device=(4, 0))  # codemod: ignore[JAX003]\n"
    )
    result = process_source(source, "m.py", Settings(rules=(UnsupportedDlDevice(),)))
    assert result.findings == [] and not result.changed


def test_existing_helper_is_reused_not_duplicated():
    settings = Settings(rules=(UnsupportedDlDevice(),), unsafe_fixes=True)
    source = "import jax\n\ndef f(x, d):\n    return [x.__dlpack__(dl_device=d)]\n"
    first = process_source(source.encode(), "m.py", settings).fixed.decode()
    later = first + "\ndef g(x, d):\n    return [x.__dlpack__(dl_device=d, stream=None)]\n"
    result = process_source(later.encode(), "m.py", settings)
    assert [f.fix.value for f in result.findings] == ["unsafe"]
    text = result.fixed.decode()
    assert text.count("def _dlpack_or_native_device(") == 1
    assert "return [_dlpack_or_native_device(x, d, stream=None)]" in text


@pytest.mark.parametrize("handler", ["BufferError", "(BufferError, KeyError)", "LookupError", "Exception"])
def test_a_guard_is_reported_exactly_when_its_handler_misses_what_jax_raises(handler):
    # Run with the installed JAX (0.4.30 in CI's old-JAX environment: KeyError; newer: BufferError).
    source = (
        "import jax.numpy as jnp\n"
        "def export(x, dl_device):\n"
        "    try:\n"
        "        return x.__dlpack__(dl_device=dl_device)\n"
        f"    except {handler}:\n"
        "        return 'fallback'\n"
    )
    runs = _run(
        source
        + "try:\n    print(export(jnp.ones(2), (4, 0)) == 'fallback')\nexcept Exception as e:\n    print(type(e).__name__)\n"
    )
    result = process_source(source.encode(), "m.py", Settings(rules=(UnsupportedDlDevice(),)))
    assert not result.changed
    if runs == "True":
        assert result.findings == []
    else:
        assert runs == jax_versions.unsupported_device_error(jax_versions.default_target())
        # Either this guard's own report, or the fallback any unguarded export gets.
        [finding] = result.findings
        assert f"raises {runs}" in finding.message
