"""Hostile settings files (issue 53, round three): what the tree's requirement files, setup.py,
setup.cfg, pyproject.toml and ignore files can do to a run. Each is read bounded, inside the tree,
linearly; one that cannot be read is a warning, never the run's end; and under a trusted
``--config`` nothing in the tree narrows what is checked."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jax_codemod.engine import config as config_module
from jax_codemod.engine import requirements
from jax_codemod.engine.requirements import declared_jax
from test_cli import invoke

# JAX005: the removed API, reported where the target reaches 0.7.
REMOVED = b"import jax.dlpack\nimport torch\n\nt = torch.from_dlpack(jax.dlpack.to_dlpack(x))\n"
# About how the target is found: nothing pins it here (tests/conftest.py).
pytestmark = pytest.mark.target_unpinned




def _project(tmp_path: Path, files: dict[str, str | bytes]) -> Path:
    (tmp_path / ".git").mkdir(parents=True)
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            (tmp_path / name).write_bytes(text)
        else:
            (tmp_path / name).write_text(text)
    (tmp_path / "src").mkdir(exist_ok=True)
    (tmp_path / "src" / "a.py").write_bytes(REMOVED)
    return tmp_path


def _limited(seconds: int, mib: int = 1024):
    """For a subprocess: a CPU and memory limit, so that the old behaviour (reading /dev/zero, a
    backtracking regex) fails the test instead of taking the machine."""
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds))
        resource.setrlimit(resource.RLIMIT_AS, (mib * 2**20, mib * 2**20))
    return apply


def _run_cli(args, cwd: Path, seconds: int = 60) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("CODEMOD_TARGET_JAX_VERSION", "CODEMOD_TARGET_PLATFORMS")}
    return subprocess.run([sys.executable, "-m", "jax_codemod.cli", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=seconds * 3, preexec_fn=_limited(seconds),
                          check=False)


# Hole 1: the requirement regex backtracked for hours on `jax`, spaces, `@` -----------------------


@pytest.mark.parametrize("line", ["jax" + " " * 600 + "@", "jax" + " " * 100_000 + "@", "jax[" + "a," * 50_000,
                                  "jax>=" + " " * 100_000 + "x", "jax ; " + "(" * 50_000])
def test_an_adversarial_requirement_line_is_read_in_linear_time(tmp_path, line):
    _project(tmp_path, {"requirements.txt": f"numpy\n{line}\njax>=0.4.30\n"})
    done = _run_cli(["run", "--show-settings", "src"], tmp_path, seconds=30)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Target JAX: >=0.4.30 (from the project's jax requirement" in done.stdout


def test_a_setup_cfg_line_of_spaces_is_read_in_linear_time(tmp_path):
    """configparser's option regex is quadratic in a line of spaces (8,000 of them: 1 s; this one:
    hours): setup.cfg is read by a linear reader of the two sections that declare requirements."""
    _project(tmp_path, {"setup.cfg": "[options]\ninstall_requires =\n    jax>=0.5\nx" + " " * 500_000 + "y\n"})
    done = _run_cli(["run", "--show-settings", "src"], tmp_path, seconds=30)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Target JAX: >=0.5.0 (from the project's jax requirement" in done.stdout


# Hole 7: a committed link to /dev/zero (or a FIFO, or a huge file) read without limit ----------


@pytest.mark.parametrize("name", ["requirements-dev.txt", "setup.py", "setup.cfg", "pyproject.toml"])
def test_a_settings_file_linked_out_of_the_tree_is_not_read(tmp_path, name):
    _project(tmp_path, {"requirements.txt": "jax>=0.4.30\n"})
    os.symlink("/dev/zero", tmp_path / name)
    done = _run_cli(["run", "--check", "--no-cache", "--format", "json", "--exit-zero", "src"], tmp_path, seconds=30)
    assert done.returncode == 0, done.stderr[-2000:]
    assert [f["code"] for f in json.loads(done.stdout)["findings"]] == ["JAX005"]
    assert f"{name}: not read: a symbolic link out of the project (to /dev/zero)" in done.stderr


def test_settings_files_are_read_only_when_regular_and_bounded(tmp_path):
    big = "numpy\n" * (requirements.MAX_SETTINGS_FILE_BYTES // 6 + 1) + "jax<0.5\n"
    _project(tmp_path, {"requirements.txt": "jax>=0.5,<0.7\n", "requirements-big.txt": big,
                        "setup.py": "from setuptools import setup\nsetup(install_requires=['jax<0.5'])\n"
                                    + "#" * requirements.MAX_SETUP_PY_BYTES})
    os.mkfifo(tmp_path / "requirements-fifo.txt")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "real.txt").write_text("jax>=0.6,<0.8\n")
    os.symlink(tmp_path / "sub" / "real.txt", tmp_path / "requirements-linked.txt")  # inside the tree: read
    code, out, err = invoke(["run", "--show-settings", "src"], cwd=tmp_path)
    assert code == 0, err
    assert "requirements-fifo.txt: not read: not a regular file" in err
    assert "requirements-big.txt: not read: " in err and "over the 1 MiB limit" in err
    assert "setup.py: not read: " in err and "over the 256 KiB limit" in err
    # The big files declare nothing; the others do, the linked one included.
    assert "Target JAX: >=0.5.0,<0.8.0 (from the project's jax requirement" in out


# Holes 8, 9 and 16: setup.py and pyproject.toml that break the parser, or are too big to parse -----


@pytest.mark.parametrize(("name", "text"), [
    ("setup.py", "from setuptools import setup\nsetup(install_requires=['jax'], x=" + "-" * 200_000 + "1)\n"),
    ("setup.py", "import jax\nx = " + "not " * 50_000 + "1\n"),
    ("pyproject.toml", '[project]\nname = "p"\ndependencies = ["jax"]\nx = ' + "[" * 5000 + "]" * 5000 + "\n"),
    ("pyproject.toml", '[project]\ndependencies = ["jax"]\n[tool.x]\na = ' + "{b=" * 3000 + "1" + "}" * 3000 + "\n"),
])
def test_a_settings_file_that_breaks_the_parser_is_a_warning_not_the_runs_end(tmp_path, monkeypatch, name, text):
    """It ended the whole run with a traceback (exit 1 even with --exit-zero, no JSON document)."""
    monkeypatch.setattr(config_module, "_installed_jax_version", lambda: "0.10.2")
    _project(tmp_path, {name: text})
    code, out, err = invoke(["run", "--check", "--no-cache", "--format", "json", "--exit-zero", "src"], cwd=tmp_path)
    assert code == 0, err
    assert [f["code"] for f in json.loads(out)["findings"]] == ["JAX005"]
    assert f"{name}: not read: nested too deeply or too large to read" in err


def test_a_large_setup_py_is_not_parsed(tmp_path, monkeypatch):
    """10 MB of setup.py took 75 s and 5 GB: past the cap it is not read, let alone parsed."""
    import ast

    parsed = []
    real = ast.parse
    monkeypatch.setattr(ast, "parse", lambda source, *a, **k: parsed.append(len(source)) or real(source, *a, **k))
    body = "import jax\n" + "x = [1, 2, 3]\n" * (requirements.MAX_SETUP_PY_BYTES // 14 + 1)
    _project(tmp_path, {"setup.py": body + "setup(install_requires=['jax<0.5'])\n"})
    code, out, err = invoke(["run", "--show-settings", "src"], cwd=tmp_path)
    assert code == 0, err
    assert "over the 256 KiB limit" in err
    assert not [n for n in parsed if n > requirements.MAX_SETUP_PY_BYTES]
    # The target is not setup.py's `jax<0.5` (it may be the installed jax: 0.4.30 in one CI run).
    target = next(line for line in out.splitlines() if line.startswith("Target JAX:"))
    assert "setup.py" not in target and "<0.5" not in target, target


# Hole 12: under a trusted --config the tree's requirements do not set the target -------------------


@pytest.mark.parametrize("files", [
    {"pyproject.toml": '[project]\nname = "p"\ndependencies = ["jax==0.4.30"]\n'},
    {"requirements.txt": "jax<0.7\n"},
    {"setup.cfg": "[options]\ninstall_requires =\n    jax==0.6.2\n"},
])
def test_under_a_trusted_config_the_trees_requirements_do_not_narrow_the_target(tmp_path, monkeypatch, files):
    monkeypatch.setattr(config_module, "_installed_jax_version", lambda: "0.10.2")
    tree = _project(tmp_path / "tree", files)
    trusted = tmp_path / "trusted.toml"
    trusted.write_text("[tool.codemod]\nselect = [\"JAX005\"]\n")
    code, out, err = invoke(["run", "--check", "--no-cache", "--format", "json", "--config", trusted, tree / "src"])
    assert [f["code"] for f in json.loads(out)["findings"]] == ["JAX005"], err
    assert code == 1
    code, out, err = invoke(["run", "--show-settings", "--config", trusted, tree / "src"])
    assert "Target JAX: 0.10.2 (from the installed jax (0.10.2); under --config the checked tree's requirements " \
           "are not read)" in out
    # Without --config the project's own declaration is the target, as before.
    code, out, _ = invoke(["run", "--check", "--no-cache", "--format", "json", tree / "src"])
    assert json.loads(out)["findings"] == [] and code == 0


def test_under_a_trusted_config_the_trees_platforms_are_not_read(tmp_path):
    tree = _project(tmp_path / "tree", {"requirements.txt": "jax[tpu]>=0.4.30\n"})
    trusted = tmp_path / "trusted.toml"
    trusted.write_text("[tool.codemod]\n")
    code, out, _ = invoke(["run", "--show-settings", "--config", trusted, tree / "src"])
    assert code == 0
    assert "Target platforms: cpu,gpu (from the default: " in out and "under --config" in out
    trusted.write_text('[tool.codemod]\ntarget-platforms = ["cpu", "tpu"]\n')
    code, out, _ = invoke(["run", "--show-settings", "--config", trusted, tree / "src"])
    assert f"Target platforms: cpu,tpu (from {trusted} [tool.codemod] target-platforms)" in out


def test_under_a_trusted_config_its_own_requirements_are_the_projects(tmp_path):
    """The action's --config is the base branch's pyproject.toml: the project as merged declares
    the JAX and the platforms it supports; the pull request's tree does not."""
    tree = _project(tmp_path / "tree", {"requirements.txt": "jax==0.4.30\n", "pyproject.toml":
                                        '[project]\nname = "p"\ndependencies = ["jax==0.4.30"]\n'})
    trusted = tmp_path / "trusted.toml"
    trusted.write_text('[project]\nname = "p"\ndependencies = ["jax[tpu]>=0.6"]\n[tool.codemod]\n')
    code, out, err = invoke(["run", "--show-settings", "--config", trusted, tree / "src"])
    assert code == 0, err
    assert f"Target JAX: >=0.6.0 (from the project's jax requirement, {trusted} [project] dependencies; " in out
    assert f"Target platforms: cpu,tpu (from the project's requirements, {trusted} [project] dependencies: " \
           "jax[tpu]>=0.6; under --config" in out
    code, out, _ = invoke(["run", "--check", "--no-cache", "--format", "json", "--config", trusted, tree / "src"])
    assert "JAX005" in [f["code"] for f in json.loads(out)["findings"]] and code == 1
    code, out, err = invoke(["run", "--show-settings", "--config", "/dev/null", tree / "src"])
    assert code == 0 and "Target platforms: cpu,gpu (from the default" in out and not err


# Hole 14: under a trusted --config the tree's .gitignore and pyvenv.cfg do not hide files ----------


def test_under_a_trusted_config_ignore_files_and_venv_markers_hide_nothing(tmp_path):
    tree = _project(tmp_path / "tree", {".gitignore": "*.py\n", "pkg/pyvenv.cfg": "", "pkg/b.py": REMOVED.decode(),
                                        "nested/.gitignore": "*\n", "nested/c.py": REMOVED.decode()})
    trusted = tmp_path / "trusted.toml"
    trusted.write_text("[tool.codemod]\n")
    code, out, _ = invoke(["run", "--show-files", "--config", trusted, tree], cwd=tree)
    assert code == 0
    assert sorted(out.split()) == ["nested/c.py", "pkg/b.py", "src/a.py"]
    code, out, _ = invoke(["run", "--show-files", "--config", trusted, "src"], cwd=tree)  # the top's .gitignore too
    assert out.split() == ["src/a.py"]
    code, out, _ = invoke(["run", "--check", "--no-cache", "--format", "json", "--target-jax-version", "0.10",
                           "--config", trusted, tree], cwd=tree)
    assert code == 1 and len(json.loads(out)["findings"]) == 3
    code, out, _ = invoke(["run", "--show-settings", "--config", trusted, tree / "src"])
    assert "Git ignore files in the tree: not read" in out and "pyvenv.cfg marks a virtualenv: no" in out
    # Without --config, git's rules and virtualenvs are honoured as before.
    code, out, _ = invoke(["run", "--show-files", tree], cwd=tree)
    assert out.split() == []
    # The trusted config may ask for the ignore files back.
    trusted.write_text("[tool.codemod]\nrespect-gitignore = true\n")
    code, out, _ = invoke(["run", "--show-files", "--config", trusted, tree], cwd=tree)
    assert out.split() == []


# -r / -c includes: bounded, inside the tree ----------------------------------------------------


def test_includes_stay_inside_the_project_and_are_bounded(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("jax<0.5\n")
    chain = {f"reqs/r{i}.txt": f"-r r{i + 1}.txt\n" for i in range(requirements.MAX_INCLUDE_DEPTH + 3)}
    tree = _project(tmp_path / "tree", {
        "requirements.txt": f"jax>=0.4.30\n-r {outside}\n-r ../outside.txt\n-r reqs/r0.txt\n-r requirements.txt\n",
        **chain, f"reqs/r{requirements.MAX_INCLUDE_DEPTH + 3}.txt": "jax<0.5\n"})
    code, out, err = invoke(["run", "--show-settings", tree / "src"])
    assert code == 0, err
    assert "Target JAX: >=0.4.30 (from" in out  # neither the outside file nor the deep one was read
    assert "not read: outside the project" in err
    assert "includes are followed 5 deep" in err


# Fuzz: whatever the settings files hold, the reader returns, and stays linear --------------------

_TEXT = st.text(alphabet=st.sampled_from(list("jax[]()<>=~!.,;@ \\\n\t#-0123456789rcltpu'\"{}:/+*^")), max_size=400)
# .ci/run's fuzz step runs more of them (CODEMOD_FUZZ_EXAMPLES=2000).
FUZZ = settings(max_examples=int(os.environ.get("CODEMOD_FUZZ_EXAMPLES", "150")), deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                        HealthCheck.function_scoped_fixture])


@FUZZ
@given(name=st.sampled_from(["requirements.txt", "setup.py", "setup.cfg", "pyproject.toml"]), text=_TEXT,
       prefix=st.sampled_from(["", "jax", "[project]\ndependencies = [\"", "[options]\ninstall_requires =\n  ",
                               "setup(install_requires=['", "jax[tpu]==0.6.2 \\\n  --hash=sha256:"]))
def test_the_reader_never_raises(tmp_path_factory, name, text, prefix):
    folder = tmp_path_factory.mktemp("fuzz")
    (folder / ".git").mkdir()
    (folder / name).write_text(prefix + text, encoding="utf-8")
    found = declared_jax(str(folder))
    assert found is None or found.target is not None or found.platforms or found.warnings


def _work(text: str, name: str, tmp_path: Path) -> int:
    """Python calls the reader makes on ``text`` (a deterministic count, not the clock)."""
    folder = tmp_path / f"n{len(text)}"
    folder.mkdir()
    (folder / ".git").mkdir()
    (folder / name).write_text(text)
    calls = 0

    def count(_frame, event, _arg):
        nonlocal calls
        if event in ("call", "c_call"):
            calls += 1

    sys.setprofile(count)
    try:
        declared_jax(str(folder))
    finally:
        sys.setprofile(None)
    return calls


@pytest.mark.parametrize(("name", "unit"), [
    ("requirements.txt", "jax>=0.4.30 \\\n    --hash=sha256:00 # c\n"),
    ("requirements.txt", "jax" + " " * 60 + "@\n"),
    ("requirements.txt", "jax[tpu] ; python_version > '3' \n"),
    ("setup.cfg", "[options]\ninstall_requires =\n    jax>=0.5\n"),
    ("pyproject.toml", '[project.optional-dependencies]\nx{} = ["jax[cuda12]>=0.5"]\n'),
])
def test_the_readers_work_grows_linearly(tmp_path, name, unit):
    """Adversarial inputs of size n and 4n: the work (Python calls) at most ~4x, never 16x."""
    def text(n: int) -> str:
        return "".join(unit.replace("{}", str(i)) for i in range(n))

    small, large = _work(text(100), name, tmp_path), _work(text(400), name, tmp_path)
    assert large <= 5 * small, (small, large)


def test_a_requirement_file_of_the_size_limit_is_read_in_seconds(tmp_path):
    line = "jax" + " " * 1000 + "@ x # " + "(" * 1000 + "\n"
    _project(tmp_path, {"requirements.txt": line * (requirements.MAX_SETTINGS_FILE_BYTES // len(line))})
    started = time.process_time()
    declared_jax(str(tmp_path / "src"))
    assert time.process_time() - started < 10
