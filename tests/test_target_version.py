"""target-jax-version: where it comes from, what it changes, and that the cache keys on it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner
from jax_codemod.analysis import jax_versions
from jax_codemod.cli.main import EXIT_USAGE, main
from jax_codemod.engine.cache import settings_fingerprint
from jax_codemod.engine.config import ConfigError, load_config, resolve_target_jax_version
from jax_codemod.engine.pipeline import Settings, process_source
from jax_codemod.rules.removed_dlpack_api import RemovedDlpackApi
from jax_codemod.rules.unsupported_dl_device import UnsupportedDlDevice

REMOVED = b"import jax.dlpack\nimport torch\n\nt = torch.from_dlpack(jax.dlpack.to_dlpack(x))\n"
# kDLCUDAHost (3) is exported from 0.10.2 on, kDLOneAPI (14) from 0.11.
DEVICES = (
    b"import jax.numpy as jnp\n\nx = jnp.ones(2)\n"
    b"a = x.__dlpack__(dl_device=(3, 0))\nb = x.__dlpack__(dl_device=(14, 0))\n"
)


def invoke(args) -> tuple[int, str, str]:
    with CliRunner().isolation() as (out, err, _mixed):
        code = main([str(a) for a in args])
        return code, out.getvalue().decode(), err.getvalue().decode()


def codes(source: bytes, target: str, rule) -> list[int]:
    result = process_source(source, "m.py", Settings(rules=(rule({jax_versions.OPTION: target}),)))
    return [f.line for f in result.findings]


def test_jax005_reports_only_where_the_target_removed_the_api():
    assert codes(REMOVED, "0.6.2", RemovedDlpackApi) == []
    assert codes(REMOVED, "0.7", RemovedDlpackApi) == [4]
    capsule = b"import jax.dlpack\nimport torch.utils.dlpack\n\ny = jax.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(t))\n"
    assert codes(capsule, "0.7.1", RemovedDlpackApi) == []
    assert codes(capsule, "0.7.2", RemovedDlpackApi) == [4]


def test_jax003_device_table_follows_the_target():
    assert codes(DEVICES, "0.4.30", UnsupportedDlDevice) == [4, 5]
    assert codes(DEVICES, "0.10.2", UnsupportedDlDevice) == [5]
    assert codes(DEVICES, "0.12", UnsupportedDlDevice) == []


def test_jax003_message_names_the_error_of_the_target():
    old = process_source(DEVICES, "m.py", Settings(rules=(UnsupportedDlDevice({jax_versions.OPTION: "0.4.30"}),)))
    new = process_source(DEVICES, "m.py", Settings(rules=(UnsupportedDlDevice({jax_versions.OPTION: "0.10.2"}),)))
    assert "raises KeyError" in old.findings[0].message
    assert "raises BufferError" in new.findings[0].message


def test_jax003_fallback_catches_what_every_supported_release_raises():
    source = b"import jax\n\ndef f(x, d):\n    c = x.__dlpack__(dl_device=d)\n    return [x.__dlpack__(dl_device=d)]\n"
    for target in ("0.4.30", "0.12"):
        rule = UnsupportedDlDevice({jax_versions.OPTION: target})
        fixed = process_source(source, "m.py", Settings(rules=(rule,), unsafe_fixes=True)).fixed.decode()
        assert fixed.count("except (BufferError, KeyError, RuntimeError):") == 2, fixed


def test_config_key_and_flag(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.codemod]\ntarget-jax-version = "0.7"\n')
    config = load_config(str(tmp_path / "pyproject.toml"))
    assert config.rule_options[jax_versions.OPTION] == "0.7.0"
    assert resolve_target_jax_version(None, config) == "0.7.0"
    assert resolve_target_jax_version("0.6.1", config) == "0.6.1"  # the flag wins


@pytest.mark.parametrize("value", ["latest", "0.4.29", "0.3"])
def test_bad_versions_are_configuration_errors(tmp_path, value):
    (tmp_path / "pyproject.toml").write_text(f'[tool.codemod]\ntarget-jax-version = "{value}"\n')
    with pytest.raises(ConfigError, match="target-jax-version"):
        load_config(str(tmp_path / "pyproject.toml"))
    (tmp_path / "a.py").write_bytes(REMOVED)
    (tmp_path / "pyproject.toml").write_text("[tool.codemod]\n")
    code, _, err = invoke(["run", "--check", "--no-cache", "--target-jax-version", value, tmp_path / "a.py"])
    assert code == EXIT_USAGE
    assert "target-jax-version" in err


def test_flag_changes_findings_through_the_cli(tmp_path):
    (tmp_path / "a.py").write_bytes(REMOVED)
    base = ["run", "--check", "--format", "json", "--cache-dir", str(tmp_path / "cache"), str(tmp_path / "a.py")]
    old = invoke([*base, "--target-jax-version", "0.6"])
    new = invoke([*base, "--target-jax-version", "0.7"])
    # The cache is shared: a stale entry from the 0.6 run would hide the 0.7 findings.
    assert json.loads(old[1])["findings"] == []
    assert [f["code"] for f in json.loads(new[1])["findings"]] == ["JAX005"]
    assert old[0] == 0 and new[0] == 1


def test_target_is_part_of_the_cache_fingerprint():
    one = Settings(rules=(RemovedDlpackApi({jax_versions.OPTION: "0.6.0"}),))
    two = Settings(rules=(RemovedDlpackApi({jax_versions.OPTION: "0.7.0"}),))
    assert settings_fingerprint(one) != settings_fingerprint(two)


@pytest.mark.installed_jax
def test_default_is_read_from_metadata_without_importing_jax():
    code = (
        "import sys\n"
        "from jax_codemod.engine.config import Config, resolve_target_jax_version\n"
        "print(resolve_target_jax_version(None, Config()), 'jax' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    version, imported = done.stdout.split()
    assert imported == "False"
    installed = jax_versions.installed()
    assert version == jax_versions.render(installed or jax_versions.NEWEST_KNOWN)


@pytest.mark.installed_jax
def test_without_jax_the_newest_known_release_is_the_default(monkeypatch):
    from importlib import metadata

    def missing(name):
        raise metadata.PackageNotFoundError(name)

    jax_versions.installed.cache_clear()
    monkeypatch.setattr(metadata, "version", missing)
    try:
        assert jax_versions.default_target() == jax_versions.NEWEST_KNOWN
    finally:
        monkeypatch.undo()
        jax_versions.installed.cache_clear()


@pytest.mark.installed_jax
def test_the_installed_version_is_read_as_importlib_metadata_reads_it(tmp_path, monkeypatch):
    """The fast look-up of jax's version (no importlib.metadata import) agrees with it, and gives
    way to it for any layout it does not know."""
    import sys
    from importlib import metadata

    from jax_codemod.engine import config

    try:
        expected = metadata.version("jax")
    except metadata.PackageNotFoundError:
        expected = None
    assert config._installed_jax_version() in (expected, None)
    site = tmp_path / "site"
    (site / "jax-9.8.7.dist-info").mkdir(parents=True)
    (site / "jax-9.8.7.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: jax\nVersion: 9.8.7\n\nbody\n")
    monkeypatch.setattr(sys, "path", [str(tmp_path / "missing"), str(site), *sys.path])
    assert config._installed_jax_version() == "9.8.7" == metadata.version("jax")
    (site / "JAX-1.0.egg-info").mkdir()
    assert config._installed_jax_version() is None  # two candidates: importlib.metadata decides
