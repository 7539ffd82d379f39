"""target-jax-version: where it comes from, what it changes, and that the cache keys on it."""

from __future__ import annotations

import importlib.util
import json
import os
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
# About how the target is found: nothing pins it here (tests/conftest.py); every test that runs
# a rule names its target.
pytestmark = pytest.mark.target_unpinned

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


# The project's own jax requirement -------------------------------------------------------


def _project(tmp_path, files: dict[str, str]):
    (tmp_path / ".git").mkdir()  # the repository's top: the search for a declaration ends here
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "src").mkdir(exist_ok=True)
    (tmp_path / "src" / "a.py").write_bytes(REMOVED)
    return tmp_path


def _settings_lines(tmp_path, *extra) -> str:
    code, out, err = invoke(["run", "--show-settings", *extra, tmp_path / "src"])
    assert code == 0, err
    return next(line for line in out.splitlines() if line.startswith("Target JAX:"))


@pytest.mark.parametrize(
    ("files", "target", "source"),
    [
        ({"pyproject.toml": '[project]\nname = "p"\ndependencies = ["numpy", "jax[cuda12]>=0.4.30"]\n'},
         ">=0.4.30", "pyproject.toml [project] dependencies"),
        ({"pyproject.toml": '[project]\nname = "p"\ndependencies = ["jax (>=0.6, <0.11) ; python_version >= \'3.10\'"]\n'},
         ">=0.6.0,<0.11.0", "[project] dependencies"),
        ({"pyproject.toml": '[project]\nname = "p"\n[project.optional-dependencies]\n'
                            'old = ["jax<0.6"]\nnew = ["jax>=0.7,<0.9"]\n'},
         ">=0.4.30,<0.9.0", "[project.optional-dependencies] old, [project.optional-dependencies] new"),
        ({"pyproject.toml": '[tool.poetry.dependencies]\npython = "^3.10"\njax = "^0.6.1"\n'},
         ">=0.6.1,<0.7.0", "[tool.poetry.dependencies]"),
        ({"pyproject.toml": '[dependency-groups]\ndev = ["jax==0.6.2"]\n'}, "0.6.2", "[dependency-groups] dev"),
        ({"setup.cfg": "[options]\ninstall_requires =\n    numpy\n    jax>=0.5  # new enough\n"},
         ">=0.5.0", "setup.cfg [options] install_requires"),
        ({"setup.py": "from setuptools import setup\nREQS = ['jax~=0.6.0']\nsetup(name='p', install_requires=REQS)\n"},
         ">=0.6.0,<0.7.0", "setup.py setup(install_requires=...)"),
        ({"requirements.txt": "-r base.txt\nnumpy\njax==0.7.2 # pinned\n"}, "0.7.2", "requirements.txt"),
        # the root's own file wins over the one above it
        ({"pyproject.toml": '[project]\nname = "p"\ndependencies = ["jax>=0.4.30"]\n',
          "src/requirements.txt": "jax<0.7\n"}, ">=0.4.30,<0.7.0", "src/requirements.txt"),
    ],
)
def test_the_default_is_the_projects_declared_requirement(tmp_path, files, target, source):
    line = _settings_lines(_project(tmp_path, files))
    assert line.startswith(f"Target JAX: {target} (from the project's jax requirement, ")
    assert source in line


def test_a_declaration_yields_to_the_config_and_the_flag(tmp_path):
    _project(tmp_path, {"pyproject.toml": '[project]\nname = "p"\ndependencies = ["jax>=0.4.30"]\n'
                                          '[tool.codemod]\ntarget-jax-version = ">=0.6,<0.7"\n'})
    assert _settings_lines(tmp_path).startswith("Target JAX: >=0.6.0,<0.7.0 (from ")
    assert "[tool.codemod] target-jax-version" in _settings_lines(tmp_path)
    assert _settings_lines(tmp_path, "--target-jax-version", "0.8") == "Target JAX: 0.8.0 (from --target-jax-version)"


def test_without_a_declaration_the_installed_jax_is_the_default(tmp_path):
    _project(tmp_path, {"pyproject.toml": '[project]\nname = "p"\ndependencies = ["numpy"]\n'})
    installed = jax_versions.installed()
    expected = (f"Target JAX: {jax_versions.render(installed)} (from the installed jax" if installed
                else "Target JAX: 0.12.1 (from the newest JAX codemod knows)")
    assert _settings_lines(tmp_path).startswith(expected)


@pytest.mark.parametrize(("requirement", "found"), [("jax>=0.4.30", ["JAX005"]), ("jax<0.7", [])])
def test_findings_follow_the_declared_range(tmp_path, requirement, found):
    """A project that allows 0.7 and later has `to_dlpack` reported; one that stays below 0.7 does not."""
    _project(tmp_path, {"pyproject.toml": f'[project]\nname = "p"\ndependencies = ["{requirement}"]\n'})
    code, out, _ = invoke(["run", "--check", "--no-cache", "--format", "json", tmp_path / "src"])
    assert [f["code"] for f in json.loads(out)["findings"]] == found
    assert code == (1 if found else 0)


# A library's export through the removed `to_dlpack`, with the values it must give on every JAX.
EXPORTS = (
    b"import jax.dlpack\nimport jax.numpy as jnp\nimport torch\nimport torch.utils.dlpack\n\n\n"
    b"def export(x):\n    return torch.utils.dlpack.from_dlpack(jax.dlpack.to_dlpack(x))\n\n\n"
    b"x = jnp.arange(6.0).reshape(2, 3)\n"
    b"assert torch.equal(export(x), torch.arange(6.0).reshape(2, 3))\n"
    b"assert torch.equal(export(x.T), torch.arange(6.0).reshape(2, 3).T)\n"
)


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch, which is not installed")
@pytest.mark.parametrize("requirement", ["jax>=0.4.30", "jax<0.7"])
def test_the_declared_range_decides_the_fix_and_the_fix_runs_on_the_installed_jax(tmp_path, requirement):
    """The issue-35 pair, end to end: codemod reads the project's own requirement, fixes (or leaves)
    the file, and the result runs on the installed JAX. .ci/run has this file on 0.4.30 and on the
    newest JAX (and the matrix on every release between): for `jax>=0.4.30` the fix must give the
    values on all of them; for `jax<0.7` the file stays byte-identical and runs on every release
    that project allows, while a release it excludes really lacks `to_dlpack`."""
    _project(tmp_path, {"pyproject.toml": f'[project]\nname = "p"\ndependencies = ["{requirement}"]\n'})
    path = tmp_path / "src" / "a.py"
    path.write_bytes(EXPORTS)
    code, out, err = invoke(["run", "--no-cache", "--format", "json", tmp_path / "src"])
    assert code in (0, 1), err
    after = path.read_bytes()
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env, check=False)
    if requirement == "jax>=0.4.30":
        assert [f["code"] for f in json.loads(out)["findings"]] == ["JAX005"]
        assert b"to_dlpack" not in after.replace(b"torch.utils.dlpack", b"")
        assert done.returncode == 0, done.stderr[-3000:]
    else:
        assert json.loads(out)["findings"] == []
        assert after == EXPORTS
        if jax_versions.installed() < jax_versions.parse("0.7"):
            assert done.returncode == 0, done.stderr[-3000:]
        else:
            assert done.returncode != 0 and "to_dlpack" in done.stderr, done.stderr[-3000:]


def test_a_range_reports_what_any_release_in_it_breaks():
    # JAX005: the removal at 0.7 is inside >=0.4.30; JAX003: 0.4.30 does not export kDLCUDAHost (3).
    assert codes(REMOVED, ">=0.4.30", RemovedDlpackApi) == [4]
    assert codes(REMOVED, ">=0.5,<0.7", RemovedDlpackApi) == []
    assert codes(DEVICES, ">=0.4.30", UnsupportedDlDevice) == [4, 5]
    assert codes(DEVICES, ">=0.10.2", UnsupportedDlDevice) == [5]
    assert codes(DEVICES, ">=0.11", UnsupportedDlDevice) == []


def test_a_device_type_only_newer_releases_export_gets_the_fallback_not_the_drop():
    """Dropping `dl_device=(3, 0)` would change what 0.10.2+ does; the fallback keeps it there
    and runs on the older releases of the range too."""
    rule = UnsupportedDlDevice({jax_versions.OPTION: ">=0.4.30"})
    result = process_source(DEVICES, "m.py", Settings(rules=(rule,), unsafe_fixes=True))
    cuda_host, oneapi = result.findings
    assert "exports to only from 0.10.2" in cuda_host.message and "KeyError (BufferError from 0.5.1)" in cuda_host.message
    assert cuda_host.fix.value == oneapi.fix.value == "unsafe"
    fixed = result.fixed.decode()
    assert fixed.count("except (BufferError, KeyError, RuntimeError):") == 2
    assert "x.__dlpack__(dl_device=(3, 0))" in fixed and "x.__dlpack__(dl_device=(14, 0))" in fixed
    # a type no release in the range exports: dropped, as for one version
    never = b"import jax.numpy as jnp\n\nx = jnp.ones(2)\nc = x.__dlpack__(dl_device=(4, 0))\n"
    result = process_source(never, "m.py", Settings(rules=(rule,)))
    assert "no JAX release in the target range (>=0.4.30) exports to" in result.findings[0].message
    assert result.fixed.decode().endswith("c = x.__dlpack__()\n")


def test_a_guard_must_catch_what_every_release_in_the_range_raises():
    guarded = (b"import jax.numpy as jnp\n\ndef f(x, d):\n    try:\n        return x.__dlpack__(dl_device=d)\n"
               b"    except BufferError:\n        return x.__dlpack__()\n")
    assert codes(guarded, ">=0.5.1", UnsupportedDlDevice) == []
    result = process_source(guarded, "m.py", Settings(rules=(UnsupportedDlDevice({jax_versions.OPTION: ">=0.4.30"}),)))
    assert "JAX 0.4.30 (in the target range, >=0.4.30) raises KeyError" in result.findings[0].message


def test_jax001_reports_members_any_release_in_the_range_has():
    from jax_codemod.rules.traced_concrete_access import TracedConcreteAccess

    layout = b"import jax\n\n@jax.jit\ndef f(x):\n    return x.layout\n"
    assert codes(layout, ">=0.4.30", TracedConcreteAccess) == [5]
    assert codes(layout, "0.6.2", TracedConcreteAccess) == [5]
    assert codes(layout, ">=0.7", TracedConcreteAccess) == []


@pytest.mark.parametrize("value", [">=0.8,<0.7", "<0.4.30", "jax>=0.5"])
def test_bad_ranges_are_configuration_errors(tmp_path, value):
    (tmp_path / "pyproject.toml").write_text(f'[tool.codemod]\ntarget-jax-version = "{value}"\n')
    with pytest.raises(ConfigError, match="target-jax-version"):
        load_config(str(tmp_path / "pyproject.toml"))


def test_the_environment_variable_comes_after_the_config_and_before_the_declaration(tmp_path, monkeypatch):
    _project(tmp_path, {"pyproject.toml": '[project]\nname = "p"\ndependencies = ["jax>=0.4.30"]\n'})
    monkeypatch.setenv("CODEMOD_TARGET_JAX_VERSION", ">=0.7")
    assert _settings_lines(tmp_path) == "Target JAX: >=0.7.0 (from $CODEMOD_TARGET_JAX_VERSION)"
    assert _settings_lines(tmp_path, "--target-jax-version", "0.8") == "Target JAX: 0.8.0 (from --target-jax-version)"
    with open(tmp_path / "pyproject.toml", "a") as handle:
        handle.write('[tool.codemod]\ntarget-jax-version = "0.6"\n')
    assert _settings_lines(tmp_path).startswith("Target JAX: 0.6.0 (from ")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\n')
    monkeypatch.setenv("CODEMOD_TARGET_JAX_VERSION", "newest")
    code, _, err = invoke(["run", "--check", "--no-cache", tmp_path / "src"])
    assert code == EXIT_USAGE and "$CODEMOD_TARGET_JAX_VERSION" in err
