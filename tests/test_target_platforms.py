"""target-platforms (issue 52): the backends the findings and fixes must be right for. Where it comes
from (the flag, the config, $CODEMOD_TARGET_PLATFORMS, the project's requirements, the default),
how it is spelled, and that every rule receives it as the option ``target-platforms``."""

from __future__ import annotations

from pathlib import Path

import pytest
from jax_codemod.cli.main import EXIT_USAGE
from jax_codemod.engine.cache import settings_fingerprint
from jax_codemod.engine.config import (
    DEFAULT_PLATFORMS,
    PLATFORMS_ENV_VAR,
    Config,
    ConfigError,
    check_target_platforms,
    load_config,
)
from jax_codemod.engine.resolve import Options, Resolver, resolve, settings
from test_cli import invoke

pytestmark = pytest.mark.target_unpinned


@pytest.fixture(autouse=True)
def _no_platforms_from_the_environment(monkeypatch):
    monkeypatch.delenv(PLATFORMS_ENV_VAR, raising=False)




def _project(tmp_path: Path, files: dict[str, str]) -> Path:
    (tmp_path / ".git").mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "src").mkdir(exist_ok=True)
    (tmp_path / "src" / "a.py").write_text("import jax\n")
    return tmp_path


def _platforms_line(path: Path, *extra) -> str:
    code, out, err = invoke(["run", "--show-settings", *extra, path])
    assert code == 0, err
    return next(line for line in out.splitlines() if line.startswith("Target platforms:"))


@pytest.mark.parametrize(("files", "platforms", "source"), [
    ({"pyproject.toml": '[project]\nname = "p"\ndependencies = ["jax[tpu]>=0.4.30"]\n'}, "cpu,tpu",
     'pyproject.toml [project] dependencies: jax[tpu]>=0.4.30'),
    ({"requirements.txt": "numpy\njax[tpu]==0.6.2 \\\n  --hash=sha256:00\n"}, "cpu,tpu",
     "requirements.txt:2: jax[tpu]==0.6.2"),
    ({"setup.cfg": "[options]\ninstall_requires =\n    jax[tpu]>=0.5\n"}, "cpu,tpu",
     "setup.cfg [options] install_requires: jax[tpu]>=0.5"),
    ({"setup.py": "from setuptools import setup\nsetup(install_requires=['jax>=0.5', 'libtpu'])\n"}, "cpu,tpu",
     "setup.py setup(install_requires=...): libtpu"),
    ({"requirements.txt": "jax[cuda12]>=0.5\n"}, "cpu,gpu", "requirements.txt:1: jax[cuda12]>=0.5"),
    ({"requirements.txt": "jax\njax-cuda13-plugin[with-cuda]\n"}, "cpu,gpu", "requirements.txt:2: "),
    ({"requirements.txt": "jax[rocm]\n"}, "cpu,gpu", "requirements.txt:1: jax[rocm]"),
    ({"requirements.txt": "jax-metal\n"}, "cpu,metal", "requirements.txt:1: jax-metal"),
    ({"requirements.txt": "jax\nlibtpu-nightly ; sys_platform == 'linux'\n"}, "cpu,tpu", "requirements.txt:2: "),
    ({"pyproject.toml": '[project]\nname = "p"\ndependencies = ["jax"]\n'
                        '[project.optional-dependencies]\ntpu = ["jax[tpu]"]\ncuda = ["jax[cuda12-local]"]\n'},
     "cpu,gpu,tpu", "[project.optional-dependencies] tpu: jax[tpu]"),
    ({"pyproject.toml": '[tool.poetry.dependencies]\njax = {version = "^0.6", extras = ["tpu"]}\n'}, "cpu,tpu",
     "[tool.poetry.dependencies]: jax = "),
    # The range from pyproject.toml, the platform from the pinned requirements beside it.
    ({"pyproject.toml": '[project]\nname = "p"\ndependencies = ["jax>=0.4.30"]\n',
      "requirements.txt": "jax[tpu]==0.6.2\n"}, "cpu,tpu", "requirements.txt:1: jax[tpu]==0.6.2"),
])
def test_the_default_is_what_the_requirements_declare(tmp_path, files, platforms, source):
    line = _platforms_line(_project(tmp_path, files) / "src")
    assert line.startswith(f"Target platforms: {platforms} (from the project's requirements, "), line
    assert source in line


@pytest.mark.parametrize("files", [
    {"pyproject.toml": '[project]\nname = "p"\ndependencies = ["jax>=0.4.30"]\n'},
    {"requirements.txt": "jax[cpu]==0.6.2\n"},
    {"requirements.txt": "numpy\n"},
    {},
])
def test_a_project_that_declares_no_platform_gets_cpu_and_gpu(tmp_path, files):
    line = _platforms_line(_project(tmp_path, files) / "src")
    assert line.startswith(f"Target platforms: {DEFAULT_PLATFORMS} (from the default: no platform declared")


def test_the_flag_the_config_and_the_variable_override_the_declaration(tmp_path, monkeypatch):
    tree = _project(tmp_path, {"requirements.txt": "jax[tpu]\n"})
    assert _platforms_line(tree / "src", "--target-platforms", "CUDA, cpu") == \
        "Target platforms: cpu,gpu (from --target-platforms)"
    monkeypatch.setenv(PLATFORMS_ENV_VAR, "cpu,metal")
    assert _platforms_line(tree / "src") == f"Target platforms: cpu,metal (from ${PLATFORMS_ENV_VAR})"
    (tree / "pyproject.toml").write_text('[tool.codemod]\ntarget-platforms = ["tpu"]\n')
    assert _platforms_line(tree / "src").startswith("Target platforms: tpu (from ")
    assert "[tool.codemod] target-platforms" in _platforms_line(tree / "src")
    assert _platforms_line(tree / "src", "--target-platforms", "gpu") == "Target platforms: gpu (from --target-platforms)"


@pytest.mark.parametrize(("where", "value", "message"), [
    ("flag", "cpu,TPU!", "--target-platforms: 'TPU!' is not a platform name"),
    ("flag", ",", "--target-platforms: no platform named"),
    ("config", "1", "[tool.codemod] target-platforms must be a list of names or a comma-separated string"),
    ("config", "[1]", "[tool.codemod] target-platforms: expected a list of platform names"),
    ("config", '["cpu", "x y"]', "[tool.codemod] target-platforms: 'x y' is not a platform name"),
    ("config", "[]", "[tool.codemod] target-platforms: no platform named"),
    ("env", "cpu;tpu", f"${PLATFORMS_ENV_VAR}: 'cpu;tpu' is not a platform name"),
])
def test_a_bad_value_is_a_usage_error_that_says_where(tmp_path, monkeypatch, where, value, message):
    tree = _project(tmp_path, {})
    args = ["run", "--check", "--no-cache", tree / "src"]
    if where == "flag":
        args[1:1] = ["--target-platforms", value]
    elif where == "config":
        (tree / "pyproject.toml").write_text(f"[tool.codemod]\ntarget-platforms = {value}\n")
    else:
        monkeypatch.setenv(PLATFORMS_ENV_VAR, value)
    code, _out, err = invoke(args)
    assert code == EXIT_USAGE
    assert message in err and "Traceback" not in err
    if where == "config":
        assert str(tree / "pyproject.toml") in err


def test_names_are_normalised():
    assert check_target_platforms(["tpu", "cpu", "TPU"]) == "cpu,tpu"
    assert check_target_platforms("rocm,cuda,gpu") == "gpu"
    assert check_target_platforms(["metal", "my_backend2"]) == "cpu,metal,my_backend2".removeprefix("cpu,")
    with pytest.raises(ConfigError, match="more than the 16"):
        check_target_platforms([f"p{i}" for i in range(17)])
    with pytest.raises(ConfigError, match="not a platform name"):
        check_target_platforms(["x" * 33])


def test_every_rule_receives_the_platforms_and_the_cache_keys_on_them(tmp_path):
    tree = _project(tmp_path, {"requirements.txt": "jax[tpu]>=0.5\n"})
    (group,) = resolve([str(tree / "src")], Options())
    assert group.platforms == "cpu,tpu"
    assert {rule.options["target-platforms"] for rule in group.settings.rules} == {"cpu,tpu"}
    default = settings(Config(), Options())
    assert {rule.options["target-platforms"] for rule in default.rules} == {DEFAULT_PLATFORMS}
    assert settings_fingerprint(group.settings) != settings_fingerprint(
        settings(Config(), Options(), target=group.target, platforms="cpu,gpu"))


def test_platforms_are_per_project_like_the_range(tmp_path):
    """A walk hands over files of two projects: each file is checked for its own project's platforms."""
    tree = _project(tmp_path, {"requirements.txt": "jax\n", "tpu/requirements.txt": "jax[tpu]\n", "tpu/b.py": ""})
    options = Options()
    groups = resolve([str(tree)], options)
    resolver = Resolver(options, groups)
    assert resolver.group_for(str(tree / "src" / "a.py")).platforms == "cpu,gpu"
    assert resolver.group_for(str(tree / "tpu" / "b.py")).platforms == "cpu,tpu"
    _, by_group = resolver.split([str(tree / "src" / "a.py"), str(tree / "tpu" / "b.py")], groups[0])
    assert sorted(g.platforms for g, _ in by_group) == ["cpu,gpu", "cpu,tpu"]


def test_the_config_key_is_validated_when_loaded(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.codemod]\ntarget-platforms = ["ROCm", "tpu"]\n')
    assert load_config(str(tmp_path / "pyproject.toml")).rule_options["target-platforms"] == "gpu,tpu"
    (tmp_path / "pyproject.toml").write_text('[tool.codemod]\ntarget-platforms = "tpu, cpu"\n')  # as the flag
    assert load_config(str(tmp_path / "pyproject.toml")).rule_options["target-platforms"] == "cpu,tpu"


def test_a_nested_config_sets_the_platforms_of_its_files(tmp_path):
    tree = _project(tmp_path, {"requirements.txt": "jax\n", "tpu/pyproject.toml": '[tool.codemod]\ntarget-platforms = "tpu"\n',
                               "tpu/b.py": ""})
    code, out, _ = invoke(["run", "--show-settings", tree / "tpu" / "b.py"])
    assert code == 0
    assert f"Target platforms: tpu (from {tree / 'tpu' / 'pyproject.toml'} [tool.codemod] target-platforms)" in out
    groups = resolve([str(tree)], Options())
    assert Resolver(Options(), groups).group_for(str(tree / "tpu" / "b.py")).platforms == "tpu"
    assert Resolver(Options(), groups).group_for(str(tree / "src" / "a.py")).platforms == "cpu,gpu"


@pytest.mark.parametrize(("line", "platforms"), [
    ("jax[cuda12_pip]", {"gpu"}), ("jax[cuda12-local]", {"gpu"}), ("jax[cuda13]", {"gpu"}), ("jax[cuda]", {"gpu"}),
    ("jax-cuda12-pjrt==0.6.2", {"gpu"}), ("jax-rocm60-plugin", {"gpu"}), ("jaxlib==0.4.30+cuda12.cudnn89", {"gpu"}),
    ("Jax_Metal>=0.1", {"metal"}), ("libtpu==0.0.17", {"tpu"}), ("jax[tpu,cuda12]", {"gpu", "tpu"}),
    ("jax[cpu]", set()), ("jax[k8s]", set()), ("jaxlib==0.4.30", set()), ("jax-cuda12-plugin-extra", set()),
])
def test_the_requirements_that_name_a_platform(tmp_path, line, platforms):
    from jax_codemod.engine.requirements import declared_jax

    (tmp_path / ".git").mkdir()
    (tmp_path / "requirements.txt").write_text(f"jax>=0.5\n{line}\n")
    assert set(declared_jax(str(tmp_path)).platforms) == platforms
