"""What a ruff user expects (issue 15): file selection, errors that do not stop the run, output and
exit controls, suppressions, packaging and start-up. Behaviour about files, processes and git runs
the real command in a subprocess."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import jax_codemod
import pytest
from jax_codemod.cli.main import EXIT_ATTENTION, EXIT_OK, EXIT_USAGE, run_command
from jax_codemod.engine.discovery import DEFAULT_EXCLUDE, MAX_IGNORE_FILE_BYTES
from test_bulk import git
from test_cli import BROKEN, CLEAN, FIXED, REPO, REPORT_ONLY, invoke

UNSAFE_CASE = REPO / "tests" / "snapshots" / "unguarded_dlpack_export" / "unsafe_jax_computations.py"


def codemod(*args, cwd: Path, env: dict | None = None, timeout: float = 120):
    """The installed command in a subprocess: (exit code, stdout, stderr)."""
    environment = dict(os.environ if env is None else env)
    environment.setdefault("CODEMOD_CACHE_DIR", str(cwd / ".cache-for-test"))
    done = subprocess.run(
        [sys.executable, "-m", "jax_codemod.cli", *map(str, args)],
        cwd=cwd, capture_output=True, text=True, env=environment, timeout=timeout, check=False,
    )
    return done.returncode, done.stdout, done.stderr


def write(root: Path, files: dict[str, bytes | str]) -> Path:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)
    return root


def shown(out: str) -> list[str]:
    return sorted(line.replace(os.sep, "/") for line in out.splitlines())


# File selection --------------------------------------------------------------------------------


def test_config_excludes_with_slashes_match_relative_to_their_pyproject(tmp_path):
    project = write(tmp_path / "project", {
        "pyproject.toml": '[tool.codemod]\nextend-exclude = ["third_party/*", "pkg/sub/"]\n',
        "a.py": BROKEN, "third_party/t.py": BROKEN, "pkg/sub/s.py": BROKEN, "pkg/keep.py": BROKEN,
        "other/third_party/o.py": BROKEN,  # anchored: only the project's own third_party/ is meant
    })
    # From the folder above, and from inside: the same files, whatever the paths look like as typed.
    for cwd, root in ((tmp_path, "project"), (project, "."), (project / "pkg", "..")):
        code, out, err = codemod("run", "--show-files", root, cwd=cwd)
        assert code == EXIT_OK, err
        assert sorted(Path(name).name for name in shown(out)) == ["a.py", "keep.py", "o.py"], (cwd, out)


def test_command_line_exclude_is_relative_to_the_working_directory(tmp_path):
    write(tmp_path, {"pkg/sub/x.py": BROKEN, "pkg/y.py": BROKEN})
    code, out, _ = codemod("run", "--show-files", "--exclude", "pkg/sub/*", ".", cwd=tmp_path)
    assert (code, shown(out)) == (EXIT_OK, ["pkg/y.py"])
    code, out, _ = codemod("run", "--show-files", "--extend-exclude", "y.py", ".", cwd=tmp_path)
    assert (code, shown(out)) == (EXIT_OK, ["pkg/sub/x.py"])


def test_default_excludes_and_exclude_replacing_them(tmp_path):
    write(tmp_path, {"keep.py": CLEAN, "build/b.py": CLEAN, ".venv/lib/v.py": CLEAN, "node_modules/n.py": CLEAN,
                     ".github/scripts/g.py": CLEAN})
    _, out, _ = codemod("run", "--show-files", ".", cwd=tmp_path)
    assert shown(out) == [".github/scripts/g.py", "keep.py"]  # a dot-folder not in the list is checked, as in ruff
    (tmp_path / "pyproject.toml").write_text('[tool.codemod]\nexclude = ["node_modules"]\n')
    _code, out, _ = codemod("run", "--show-files", ".", cwd=tmp_path)
    assert shown(out) == [".github/scripts/g.py", ".venv/lib/v.py", "build/b.py", "keep.py"]


def test_default_exclude_list_is_documented_in_help_and_readme():
    code, out, _ = invoke(["run", "--help"])
    readme = (REPO / "docs" / "reference.md").read_text()
    assert code == EXIT_OK
    help_text = " ".join(out.split())
    for name in DEFAULT_EXCLUDE:
        assert name in help_text, name
        assert f"`{name}`" in readme, name


def test_force_exclude_applies_excludes_to_named_paths(tmp_path):
    write(tmp_path, {"pyproject.toml": '[tool.codemod]\nextend-exclude = ["vendor/"]\n',
                     "vendor/v.py": BROKEN, "a.py": BROKEN, "build/gen.py": BROKEN})
    code, out, _ = codemod("run", "--show-files", "vendor/v.py", "a.py", "build/gen.py", cwd=tmp_path)
    assert shown(out) == ["a.py", "build/gen.py", "vendor/v.py"]  # named: checked, as in ruff
    code, out, _ = codemod("run", "--show-files", "--force-exclude", "vendor/v.py", "a.py", "build/gen.py",
                           cwd=tmp_path)
    assert shown(out) == ["a.py"]
    code, _, err = codemod("run", "--force-exclude", "vendor/v.py", "a.py", cwd=tmp_path)
    assert code == EXIT_OK, err
    assert (tmp_path / "vendor/v.py").read_bytes() == BROKEN and (tmp_path / "a.py").read_bytes() == FIXED


def test_force_exclude_from_config(tmp_path):
    write(tmp_path, {"pyproject.toml": '[tool.codemod]\nforce-exclude = true\nextend-exclude = ["gen_*.py"]\n',
                     "gen_x.py": BROKEN})
    code, out, err = codemod("run", "--show-files", "gen_x.py", cwd=tmp_path)
    assert (code, out) == (EXIT_OK, ""), err
    code, out, _ = codemod("run", "--show-files", "--no-force-exclude", "gen_x.py", cwd=tmp_path)
    assert shown(out) == ["gen_x.py"]


def test_git_info_exclude_and_global_excludes_file_are_honoured(tmp_path):
    repo = write(tmp_path / "repo", {"a.py": CLEAN, "local_only/x.py": CLEAN, "scratch_y.py": CLEAN,
                                     "sub/scratch_z.py": CLEAN})
    git("init", "-q", cwd=repo)
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "exclude").write_text("local_only/\n")
    global_ignore = tmp_path / "global-ignore"
    global_ignore.write_text("scratch_*.py\n")
    gitconfig = tmp_path / "gitconfig"
    gitconfig.write_text(f"[core]\n\texcludesFile = {global_ignore}\n")
    env = dict(os.environ, HOME=str(tmp_path), GIT_CONFIG_GLOBAL=str(gitconfig), XDG_CONFIG_HOME=str(tmp_path / "x"))
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=repo, env=env,
                            capture_output=True, text=True, check=True).stdout
    assert status.split() == ["??", "a.py"]  # git itself ignores the same files
    code, out, err = codemod("run", "--show-files", ".", cwd=repo, env=env)
    assert (code, shown(out)) == (EXIT_OK, ["a.py"]), err
    # Unset, git's default global file ($XDG_CONFIG_HOME/git/ignore) is read.
    gitconfig.write_text("")
    write(tmp_path / "x" / "git", {"ignore": "sub/\n"})
    code, out, err = codemod("run", "--show-files", ".", cwd=repo, env=env)
    assert shown(out) == ["a.py", "scratch_y.py"], err


def test_info_exclude_of_a_linked_worktree_is_the_main_repositorys(tmp_path):
    main = write(tmp_path / "main", {"a.py": CLEAN, "local_only/x.py": CLEAN})
    git("init", "-q", cwd=main)
    git("add", "-A", cwd=main)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init", cwd=main)
    git("worktree", "add", "-q", str(tmp_path / "wt"), cwd=main)
    (main / ".git" / "info").mkdir(exist_ok=True)
    (main / ".git" / "info" / "exclude").write_text("local_only/\n")
    assert (tmp_path / "wt" / ".git").is_file()
    code, out, err = codemod("run", "--show-files", ".", cwd=tmp_path / "wt")
    assert (code, shown(out)) == (EXIT_OK, ["a.py"]), err


@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "too-big", "symlink-in-tree"])
def test_ignore_files_are_read_only_when_regular_and_small(tmp_path, kind):
    write(tmp_path, {"a.py": BROKEN, "b.py": BROKEN})
    ignore = tmp_path / ".gitignore"
    if kind == "dev-zero":
        ignore.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(ignore)
    elif kind == "symlink-in-tree":
        (tmp_path / "patterns.txt").write_text("b.py\n")
        ignore.symlink_to(tmp_path / "patterns.txt")
    else:
        ignore.write_bytes(b"b.py\n" + b"#" * MAX_IGNORE_FILE_BYTES)
    code, _out, err = codemod("run", "--check", ".", cwd=tmp_path, timeout=60)
    assert code == EXIT_ATTENTION
    assert "warning: .gitignore: not read" in err
    assert "2 files scanned" in err  # the ignore file was skipped, nothing else


def test_a_named_symlink_out_of_every_root_is_refused(tmp_path):
    outside = write(tmp_path / "outside", {"victim.py": BROKEN})
    project = write(tmp_path / "project", {"a.py": BROKEN})
    git("init", "-q", cwd=project)
    (project / "link.py").symlink_to(outside / "victim.py")
    (project / "inner.py").symlink_to(project / "a.py")
    code, _, err = codemod("run", "link.py", "inner.py", cwd=project)
    assert code == EXIT_ATTENTION
    assert re.search(r"error: link\.py: refused: a symlink to .*victim\.py, outside every root", err)
    assert (outside / "victim.py").read_bytes() == BROKEN
    assert (project / "a.py").read_bytes() == FIXED  # a link inside the project is fine


def test_show_settings_prints_rules_options_excludes_and_config(tmp_path):
    write(tmp_path, {
        "pyproject.toml": '[tool.codemod]\nextend-select = ["JAX004"]\nhelper-module = "proj.interop"\n'
                          'extend-exclude = ["gen/"]\n[tool.codemod.per-file-ignores]\n"legacy/*" = ["JAX005"]\n',
        "legacy/old.py": BROKEN,
    })
    code, out, err = codemod("run", "--show-settings", "--exclude", "tmp_*", "legacy/old.py", cwd=tmp_path)
    assert code == EXIT_OK, err
    assert "Settings for: legacy/old.py" in out
    assert f"Config: {tmp_path.resolve() / 'pyproject.toml'}" in out or f"Config: {tmp_path / 'pyproject.toml'}" in out
    rules_line = next(line for line in out.splitlines() if line.startswith("Rules:"))
    assert "JAX004 dlpack-without-host-fallback" in rules_line and "JAX005" not in rules_line
    assert "Turned off here by per-file-ignores: JAX005" in out
    assert "helper-module = 'proj.interop'" in out
    assert "default (relative to" in out and ".venv" in out
    assert "extend-exclude (relative to" in out and "gen/" in out
    assert "--exclude (relative to" in out and "tmp_*" in out
    assert (tmp_path / "legacy/old.py").read_bytes() == BROKEN


# Errors that do not stop the run ------------------------------------------------------------------


def test_named_unreadable_and_missing_files_are_per_file_errors(tmp_path):
    write(tmp_path, {"a.py": BROKEN})
    os.mkfifo(tmp_path / "pipe.py")
    (tmp_path / "dangling.py").symlink_to(tmp_path / "gone.py")
    code, _, err = codemod("run", "pipe.py", "missing.py", "dangling.py", "a.py", cwd=tmp_path, timeout=60)
    assert code == EXIT_ATTENTION
    assert "error: pipe.py: cannot read: not a regular file" in err
    assert "error: missing.py: no such file or directory" in err
    assert "error: dangling.py: cannot read" in err
    assert (tmp_path / "a.py").read_bytes() == FIXED


def test_a_folder_without_python_files_is_a_warning(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# hi\n")
    code, _, err = codemod("run", "--check", "docs", cwd=tmp_path)
    assert code == EXIT_OK
    assert "warning: docs: no Python files found under it" in err


@pytest.mark.parametrize("destination", ["missing-dir/r.json", "link.json", "adir"])
def test_report_destination_is_checked_before_anything_is_written(tmp_path, destination):
    write(tmp_path, {"a.py": BROKEN})
    (tmp_path / "adir").mkdir()
    (tmp_path / "elsewhere.json").write_text("keep\n")
    (tmp_path / "link.json").symlink_to(tmp_path / "elsewhere.json")
    code, _, err = codemod("run", "--report", destination, "a.py", cwd=tmp_path)
    assert code == EXIT_USAGE
    assert "--report" in err
    assert (tmp_path / "a.py").read_bytes() == BROKEN
    assert (tmp_path / "elsewhere.json").read_text() == "keep\n"


def test_report_replaces_an_existing_file_by_rename(tmp_path):
    write(tmp_path, {"a.py": BROKEN, "r.json": "old\n"})
    before = (tmp_path / "r.json").stat().st_ino
    code, _, err = codemod("run", "--check", "--report", "r.json", "a.py", cwd=tmp_path)
    assert code == EXIT_ATTENTION, err
    assert json.loads((tmp_path / "r.json").read_text())["summary"]["findings"] == 1
    assert (tmp_path / "r.json").stat().st_ino != before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".codemod-report")] == []


# Output and exit controls -----------------------------------------------------------------------


def test_diff_is_an_alias_of_dry_run(tmp_path):
    write(tmp_path, {"a.py": BROKEN})
    assert invoke(["run", "--diff", "a.py"], cwd=tmp_path) == invoke(["run", "--dry-run", "a.py"], cwd=tmp_path)
    code, out, _ = invoke(["run", "--diff", "a.py"], cwd=tmp_path)
    assert code == EXIT_ATTENTION and out.startswith("--- a/a.py\n")
    assert (tmp_path / "a.py").read_bytes() == BROKEN


def test_exit_zero_and_exit_non_zero_on_fix(tmp_path):
    write(tmp_path, {"a.py": BROKEN, "ref.py": REPORT_ONLY})
    assert invoke(["run", "--check", "--exit-zero", "a.py", "ref.py"], cwd=tmp_path)[0] == EXIT_OK
    assert invoke(["run", "--check", "a.py"], cwd=tmp_path)[0] == EXIT_ATTENTION
    assert invoke(["run", "--exit-zero", "--exit-non-zero-on-fix", "a.py"], cwd=tmp_path)[0] == EXIT_USAGE
    code, _, _ = invoke(["run", "--exit-non-zero-on-fix", "a.py"], cwd=tmp_path)
    assert code == EXIT_ATTENTION and (tmp_path / "a.py").read_bytes() == FIXED
    assert invoke(["run", "--exit-non-zero-on-fix", "a.py"], cwd=tmp_path)[0] == EXIT_OK  # nothing left to fix
    write(tmp_path, {"b.py": BROKEN})
    assert invoke(["run", "b.py"], cwd=tmp_path)[0] == EXIT_OK  # without the flag a fix is success


def test_exit_controls_on_stdin():
    assert invoke(["run", "--exit-non-zero-on-fix", "-"], stdin=BROKEN)[:2] == (EXIT_ATTENTION, FIXED.decode())
    assert invoke(["run", "--exit-non-zero-on-fix", "-"], stdin=FIXED)[0] == EXIT_OK
    assert invoke(["run", "--check", "--exit-zero", "-"], stdin=BROKEN)[0] == EXIT_OK


def test_statistics_counts_per_rule(tmp_path):
    write(tmp_path, {"a.py": BROKEN, "b.py": BROKEN, "ref.py": REPORT_ONLY})
    code, out, err = invoke(["run", "--check", "--statistics", "."], cwd=tmp_path)
    assert code == EXIT_ATTENTION
    assert out.splitlines() == [
        "count  fixable  code    name",
        "    3        2  JAX005  removed-dlpack-api",
    ]
    assert "3 files scanned" in err


def test_show_fixes_lists_what_was_or_would_be_fixed(tmp_path):
    write(tmp_path, {"a.py": BROKEN})
    code, out, err = invoke(["run", "--dry-run", "--show-fixes", "a.py"], cwd=tmp_path)
    assert out.startswith("--- a/a.py")
    assert "a.py:4:23: JAX005" in err and "[*]" in err
    code, out, _ = invoke(["run", "--show-fixes", "a.py"], cwd=tmp_path)
    assert code == EXIT_OK and "a.py:4:23: JAX005" in out and "[fixed]" in out
    write(tmp_path, {"b.py": BROKEN})
    code, out, _ = invoke(["run", "b.py"], cwd=tmp_path)
    assert (code, out) == (EXIT_OK, "")  # without the flag, fixed findings are not listed


def test_summary_says_how_to_apply_the_remaining_fixes(tmp_path):
    write(tmp_path, {"a.py": BROKEN, "u.py": UNSAFE_CASE.read_bytes()})
    _, _, err = invoke(["run", "--check", "a.py"], cwd=tmp_path)
    assert "[*] 1 fixable: run `codemod run` without --check to apply" in err
    _, _, err = invoke(["run", "--dry-run", "a.py"], cwd=tmp_path)
    assert "without --dry-run" in err
    _, _, err = invoke(["run", "--check", "--select", "JAX006", "u.py"], cwd=tmp_path)
    assert re.search(r"\d+ more fixable with --unsafe-fixes", err)
    assert err.splitlines()[-1].startswith("1 files scanned")  # the summary stays the last line


def test_no_unsafe_hint_for_a_finding_another_fix_resolves(tmp_path):
    # JAX004's copy (a TPU target) also answers the multi-device BufferError JAX006 warns of: its
    # unsafe fix has nothing left to do, with or without the flag.
    write(tmp_path, {"e.py": "import jax\nimport torch\n\n\ndef f(x: jax.Array):\n    return torch.from_dlpack(x)\n",
                     "pyproject.toml": '[tool.codemod]\ntarget-platforms = ["cpu", "tpu"]\n'})
    for flags in ([], ["--unsafe-fixes"]):
        _, _, err = invoke(["run", "--dry-run", "--select", "JAX004,JAX006", *flags, "e.py"], cwd=tmp_path)
        assert "resolved by JAX004" in err
        assert "--unsafe-fixes" not in err


def test_syntax_error_shows_line_column_and_source(tmp_path):
    write(tmp_path, {"bad.py": "import jax.dlpack\nx = jax.dlpack.to_dlpack(y\nz = [\n"})
    code, _out, err = invoke(["run", "--check", "bad.py"], cwd=tmp_path)
    assert code == EXIT_ATTENTION
    assert re.search(r"error: bad\.py:2:\d+: cannot parse: .*\n  2 \| x = jax\.dlpack\.to_dlpack\(y\n    \| +\^", err)
    document = json.loads(invoke(["run", "--check", "--format", "json", "bad.py"], cwd=tmp_path)[1])
    (error,) = document["errors"]
    assert error["line"] == 2 and isinstance(error["column"], int)


@pytest.mark.parametrize(
    ("comment", "suppressed"),
    [
        ("# noqa: JAX005", True),
        ("# noqa:JAX005", True),
        ("# NOQA: E501, JAX005", True),
        ("# noqa: E501 JAX005 -- capsule kept on purpose", True),
        ("# noqa: JAX00", True),  # a prefix, as in --select
        ("# noqa: JAX001", False),
        ("# noqa", True),  # a bare noqa is every code, as in ruff
        ("# codemod: ignore[JAX001, JAX005]", True),
        ("# codemod: ignore[JAX]", True),
        ("# codemod: ignore", True),
        ("# type: ignore  # noqa: JAX005", True),
    ],
)
def test_suppression_comments(tmp_path, comment, suppressed):
    source = f"import jax.dlpack\nc = jax.dlpack.to_dlpack(x)  {comment}\n".encode()
    write(tmp_path, {"s.py": source})
    code, out, _ = invoke(["run", "--check", "--select", "ALL", "s.py"], cwd=tmp_path)
    assert (code == EXIT_OK) is suppressed, out
    assert ("JAX005" in out) is not suppressed


def test_explain_by_name_and_list_with_descriptions():
    from jax_codemod import docs

    by_name = invoke(["explain", "removed-dlpack-api"])
    assert by_name[0] == EXIT_OK and by_name[1] == invoke(["explain", "JAX005"])[1]
    code, _, err = invoke(["explain", "no-such-rule"])
    assert code == EXIT_USAGE and "removed-dlpack-api" in err
    code, out, _ = invoke(["list"])
    lines = out.splitlines()
    assert code == EXIT_OK and len(lines) == len(jax_codemod.RULES)
    for rule, line in zip(jax_codemod.RULES, lines):
        assert line.startswith(rule.CODE) and rule.NAME in line and line.endswith(docs.summary(rule))


def test_per_file_ignores(tmp_path):
    write(tmp_path, {
        "pyproject.toml": '[tool.codemod.per-file-ignores]\n"legacy/*" = ["JAX005"]\n"*_vendored.py" = ["JAX"]\n',
        "legacy/old.py": BROKEN, "lib_vendored.py": BROKEN, "new.py": BROKEN,
    })
    code, _out, err = codemod("run", ".", cwd=tmp_path)
    assert code == EXIT_OK, err
    assert (tmp_path / "new.py").read_bytes() == FIXED
    assert (tmp_path / "legacy/old.py").read_bytes() == BROKEN
    assert (tmp_path / "lib_vendored.py").read_bytes() == BROKEN
    write(tmp_path, {"pyproject.toml": '[tool.codemod.per-file-ignores]\n"legacy/*" = ["JAX999"]\n'})
    code, _, err = codemod("run", ".", cwd=tmp_path)
    assert code == EXIT_USAGE and "pyproject.toml" in err and "per-file-ignores" in err


@pytest.mark.parametrize("value", ['"a import b; import os #"', '"a.b."', '"1abc"', '"class.x"', '"a\\nb"'])
def test_helper_module_must_be_a_dotted_name(tmp_path, value):
    write(tmp_path, {"pyproject.toml": f"[tool.codemod]\nhelper-module = {value}\n", "a.py": BROKEN})
    code, _, err = codemod("run", "a.py", cwd=tmp_path)
    assert code == EXIT_USAGE
    assert "pyproject.toml" in err and "helper-module" in err
    assert (tmp_path / "a.py").read_bytes() == BROKEN


# README and --help agree --------------------------------------------------------------------------


def run_options() -> set[str]:
    flags = set()
    for param in run_command.params:
        flags.update(o for o in [*param.opts, *param.secondary_opts] if o.startswith("--"))
    return flags | {"--help"}


def test_readme_usage_and_help_list_the_same_options():
    readme = (REPO / "docs" / "reference.md").read_text()
    usage = readme[readme.index("## Usage"):readme.index("## Exit codes")]
    documented = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", usage))
    assert documented == run_options()
    code, out, _ = invoke(["run", "--help"])
    assert code == EXIT_OK
    assert set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", out)) >= run_options()


# Packaging ----------------------------------------------------------------------------------------


def test_version_is_written_once_and_changelog_has_it():
    pyproject = (REPO / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in pyproject and 'attr = "jax_codemod.__version__"' in pyproject
    assert not re.search(r"^version\s*=\s*[\"']", pyproject, re.MULTILINE)
    changelog = (REPO / "CHANGELOG.md").read_text()
    assert f"## {jax_codemod.__version__}" in changelog
    reference = (REPO / "docs" / "reference.md").read_text()
    assert f'"version": "{jax_codemod.__version__}"' in reference
    assert f"today {jax_codemod.__version__})" in (REPO / "README.md").read_text()


def test_install_instructions_name_the_real_distribution_and_work_under_pep_668():
    readme = (REPO / "README.md").read_text()
    first = re.search(r"```sh\n(.*?)\n```", readme).group(1)
    assert first.startswith("python3 -m venv .venv && . .venv/bin/activate && pip install . ")
    assert "codemod run --dry-run examples/" in first
    sources = [readme, *(p.read_text() for p in (REPO / "examples" / "ci").glob("*.yml"))]
    for text in sources:
        assert not re.search(r"pip install [\"']?codemod[=\"' \n]", text)
        assert "codemod==" not in text.replace("jax-codemod==", "")
    assert "https://download.pytorch.org/whl/cpu" in readme
    # jax-codemod is on no package index and no release is tagged: the workflows install a git URL
    # at a commit the reader fills in.
    for workflow in (REPO / "examples" / "ci").glob("*.yml"):
        assert "CODEMOD_SPEC: git+https://example.com/your-mirror/codemod@<commit>" in \
            workflow.read_text(), workflow.name


# Start-up -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("args", [["--version"], ["run", "--check", "clean.py"], ["run", "--check", "--format", "json", "."]])
def test_a_run_without_fixes_never_imports_libcst(tmp_path, args):
    write(tmp_path, {"clean.py": CLEAN})
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "jax_codemod.cli", *args], cwd=tmp_path,
                          capture_output=True, text=True, check=False,
                          env=dict(os.environ, CODEMOD_CACHE_DIR=str(tmp_path / "c")))
    assert done.returncode == EXIT_OK, done.stderr[-2000:]
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time")}
    assert "jax_codemod.cli.main" in imported
    assert not {name for name in imported if name.split(".")[0] in {"libcst", "jax", "torch"}}
