"""The all-repos autofixer: real git repositories, a real all-repos config, a real run.

The tests that drive all-repos skip when it is not installed (it is the optional extra
``jax-codemod[all-repos]``); the engine side of the autofixer needs only codemod.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from jax_codemod import docs
from jax_codemod.analysis import jax_versions
from jax_codemod.engine.resolve import Options
from jax_codemod.integrations.all_repos import commit_message, reproduce_command, run_codemod, trigger_strings
from jax_codemod.rules.removed_dlpack_api import RemovedDlpackApi
from test_ci import tree_bytes
from test_cli import BROKEN, CLEAN, FIXED, REPO, REPORT_ONLY, invoke

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
ENV = dict(os.environ, **GIT_ENV, PYTHONPATH=str(REPO / "tests"))
ENV.pop("CODEMOD_CACHE_DIR", None)
# Copied before tests/conftest.py pins the target in os.environ for each test: pinned here too.
ENV["CODEMOD_TARGET_JAX_VERSION"] = jax_versions.render(jax_versions.NEWEST_KNOWN)
BRANCH = "all-repos_autofix_codemod"

# The organisation: name -> files.
ORG = {
    "org/broken": {"src/model.py": BROKEN, "README.md": b"# broken\n"},
    "org/mixed": {"fixable.py": BROKEN, "ref.py": REPORT_ONLY},
    "org/clean": {"clean.py": CLEAN},  # a trigger (from_dlpack) but nothing to fix
    "org/unrelated": {"app.py": b"print('hello')\n"},  # no rule's trigger: never scanned
    "org/syntax": {"good.py": BROKEN, "bad.py": b"x = jax.dlpack.to_dlpack(\n"},
    "org/badconfig": {"pyproject.toml": b'[tool.codemod]\nselect = "JAX005"\n', "a.py": BROKEN},  # not a list
    "org/configured": {
        "pyproject.toml": b'[tool.codemod]\nextend-exclude = ["vendor/"]\n',
        "vendor/lib.py": BROKEN,
        "mine.py": BROKEN,
    },
}


def git(*args, cwd) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=ENV).stdout


def make_origin(root: Path, name: str, files: dict[str, bytes]) -> Path:
    """A working repository with one commit, and the bare repository all-repos clones and pushes to."""
    work = root / "work" / name
    work.mkdir(parents=True)
    for path, content in files.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_bytes(content)
    git("init", "-q", "-b", "main", cwd=work)
    git("add", "-A", cwd=work)
    git("commit", "-qm", "init", cwd=work)
    bare = root / "remotes" / f"{name}.git"
    bare.parent.mkdir(parents=True, exist_ok=True)
    git("clone", "-q", "--bare", str(work), str(bare), cwd=root)
    return bare


def head(bare: Path, ref: str = "main") -> str:
    return git("rev-parse", ref, cwd=bare).strip()


def checkout(bare: Path, where: Path) -> Path:
    git("clone", "-q", str(bare), str(where), cwd=bare.parent)
    return where


@pytest.fixture
def org(tmp_path):
    pytest.importorskip("all_repos", reason="all-repos is not installed (the optional extra jax-codemod[all-repos])")
    remotes = {name: make_origin(tmp_path, name, files) for name, files in ORG.items()}
    (tmp_path / "repos.json").write_text(json.dumps({name: str(path) for name, path in remotes.items()}))
    config = tmp_path / "all-repos.json"
    config.write_text(json.dumps({
        "output_dir": "output",
        "source": "all_repos.source.json_file",
        "source_settings": {"filename": str(tmp_path / "repos.json")},
        "push": "all_repos.push.merge_to_master",
        "push_settings": {},
    }))
    config.chmod(0o600)  # all-repos refuses a config others can read
    subprocess.run([sys.executable, "-m", "all_repos.clone", "-C", str(config)], cwd=tmp_path, check=True,
                   capture_output=True, env=ENV)
    return tmp_path, config, remotes


def autofix(tmp_path: Path, config: Path, *args) -> tuple[subprocess.CompletedProcess, dict]:
    summary = tmp_path / "summary.json"
    done = subprocess.run(
        [sys.executable, "-m", "jax_codemod.integrations.all_repos", "-C", str(config), "--color", "never",
         "--summary-json", str(summary), "--summary-markdown", str(tmp_path / "summary.md"), *args],
        cwd=tmp_path, capture_output=True, text=True, env=ENV, check=False,
    )
    return done, json.loads(summary.read_text())


def fix_commit(bare: Path) -> str:
    """The autofixer's commit: merge_to_master merges its branch with --no-ff, so main^2."""
    return git("log", "-1", "--format=%B", "main^2", cwd=bare)


def test_autofixer_commits_one_reviewed_fix_per_repository(org):
    tmp_path, config, remotes = org
    before = {name: head(bare) for name, bare in remotes.items()}
    done, summary = autofix(tmp_path, config)
    assert done.returncode == 1, done.stdout + done.stderr  # org/syntax failed

    statuses = {r["repository"]: r["status"] for r in summary["repositories"]}
    assert statuses == {"org/broken": "changed", "org/mixed": "changed", "org/clean": "clean",
                        "org/syntax": "failed", "org/badconfig": "failed",
                        "org/configured": "changed", "org/unrelated": "clean"}  # unrelated: no trigger, not cloned
    assert summary["organisations"] == {"org": {"scanned": 7, "changed": 3, "findings_left": 1, "failed": 2}}
    (syntax,) = [r for r in summary["repositories"] if r["repository"] == "org/syntax"]
    assert "bad.py:1" in syntax["reason"] and "cannot parse" in syntax["reason"]
    (badconfig,) = [r for r in summary["repositories"] if r["repository"] == "org/badconfig"]
    assert badconfig["reason"].startswith("configuration error: ") and "select" in badconfig["reason"]
    markdown = (tmp_path / "summary.md").read_text()
    assert "| org | 7 | 3 | 1 | 2 |" in markdown
    assert "| org/unrelated | clean | 0 |  | 0 | `no trigger string" in markdown
    assert "| org/mixed | changed | 1 | JAX005 ×1 | 1 |" in markdown

    # Unchanged repositories: no new commit, no branch.
    for name in ("org/clean", "org/unrelated", "org/syntax", "org/badconfig"):
        assert head(remotes[name]) == before[name], name
        assert git("for-each-ref", "--format=%(refname)", cwd=remotes[name]).split() == ["refs/heads/main"]

    # Changed ones: a merge of the autofix branch whose commit says what the run did.
    for name in ("org/broken", "org/mixed", "org/configured"):
        bare = remotes[name]
        assert git("rev-parse", "main^1", cwd=bare).strip() == before[name]
        assert git("log", "-1", "--format=%s", "main", cwd=bare).startswith(f"Merge branch '{BRANCH}'")
        message = fix_commit(bare)
        assert message.startswith("codemod: fix broken JAX interop code (JAX005 ×1)\n\n"), message
        assert "| JAX005 removed-dlpack-api | 1 |" in message
        # This codemod is an editable install (a local build): no install line a reader could not use.
        assert "pip install" not in message and "local build" in message and "    codemod run .\n" in message
        assert message.rstrip().endswith("Committed via https://github.com/asottile/all-repos")

    broken = remotes["org/broken"]
    assert git("show", "main:src/model.py", cwd=broken).encode() == FIXED
    assert git("show", "main:README.md", cwd=broken) == "# broken\n"
    assert "No findings are left." in fix_commit(broken)

    mixed = fix_commit(remotes["org/mixed"])
    assert "Findings left for a human (1), not changed by this commit:" in mixed
    assert "- `ref.py:3:14` JAX005 removed-dlpack-api:" in mixed
    advice = docs.sections(RemovedDlpackApi)["Use instead"]
    assert f"<code>codemod explain JAX005</code>)</summary>\n\n{advice}\n\n</details>" in mixed
    assert git("show", "main:ref.py", cwd=remotes["org/mixed"]).encode() == REPORT_ONLY

    # The repository's own [tool.codemod] is honoured.
    configured = remotes["org/configured"]
    assert git("show", "main:vendor/lib.py", cwd=configured).encode() == BROKEN
    assert git("show", "main:mine.py", cwd=configured).encode() == FIXED
    assert git("diff", "--name-only", "main^1", "main", cwd=configured).split() == ["mine.py"]

    # A second run has nothing left to do.
    after = {name: head(bare) for name, bare in remotes.items()}
    subprocess.run([sys.executable, "-m", "all_repos.clone", "-C", str(config)], cwd=tmp_path, check=True,
                   capture_output=True, env=ENV)
    _, again = autofix(tmp_path, config)
    assert {r["repository"]: r["status"] for r in again["repositories"]}["org/broken"] == "clean"
    assert {name: head(bare) for name, bare in remotes.items()} == after


def test_autofixer_output_is_byte_identical_to_codemod_run(org):
    tmp_path, config, remotes = org
    expected = {}
    for name in ("org/broken", "org/mixed", "org/configured"):
        manual = checkout(remotes[name], tmp_path / "manual" / name)
        done = subprocess.run([sys.executable, "-m", "jax_codemod.cli", "run", "--no-cache", "."], cwd=manual,
                              capture_output=True, env=ENV, check=False)
        assert done.returncode in (0, 1), done.stderr
        expected[name] = tree_bytes(manual)
    done, summary = autofix(tmp_path, config, "--jobs", "2")  # repositories in parallel processes
    assert summary["organisations"]["org"]["changed"] == 3, done.stdout + done.stderr
    for name, files in expected.items():
        assert tree_bytes(checkout(remotes[name], tmp_path / "after" / name)) == files, name


def test_dry_run_changes_nothing(org):
    tmp_path, config, remotes = org
    refs = {name: git("for-each-ref", cwd=bare) for name, bare in remotes.items()}
    clones = tree_bytes(tmp_path / "output")
    done, summary = autofix(tmp_path, config, "--dry-run")
    assert done.returncode == 1
    statuses = {r["repository"]: r["status"] for r in summary["repositories"]}
    assert statuses["org/broken"] == "would change" and statuses["org/clean"] == "clean"
    assert summary["organisations"]["org"]["changed"] == 3
    assert {name: git("for-each-ref", cwd=bare) for name, bare in remotes.items()} == refs
    assert tree_bytes(tmp_path / "output") == clones
    assert "src/model.py" in done.stdout  # the diff stat of what would be committed


def test_interactive_no_and_limit(org):
    tmp_path, config, remotes = org
    refs = {name: git("for-each-ref", cwd=bare) for name, bare in remotes.items()}
    summary_file = tmp_path / "summary.json"
    done = subprocess.run(
        [sys.executable, "-m", "jax_codemod.integrations.all_repos", "-C", str(config), "--color", "never",
         "-i", "--limit", "2", "--summary-json", str(summary_file)],
        cwd=tmp_path, input="n\n", capture_output=True, text=True, env=ENV, check=False,
    )
    summary = json.loads(summary_file.read_text())
    # In name order: org/badconfig fails before any prompt, org/broken is declined at the prompt.
    assert {r["repository"]: r["status"] for r in summary["repositories"]} == {
        "org/badconfig": "failed", "org/broken": "declined",
        "org/unrelated": "clean"}, done.stdout + done.stderr  # no trigger: listed, never visited
    assert "Looks good" in done.stdout
    assert {name: git("for-each-ref", cwd=bare) for name, bare in remotes.items()} == refs


def test_select_narrows_the_repositories_scanned(org):
    tmp_path, config, _ = org
    done, summary = autofix(tmp_path, config, "--select", "JAX003", "--dry-run")
    assert done.returncode == 0, done.stdout + done.stderr
    # Nothing in the organisation passes dl_device: every repository is listed as clean, none cloned.
    assert {r["repository"]: r["status"] for r in summary["repositories"]} == dict.fromkeys(ORG, "clean")
    assert summary["organisations"]["org"]["scanned"] == len(ORG)
    assert summary["command"] == "codemod run --select JAX003 ."


def test_bad_select_is_a_usage_error_before_any_repository_is_touched(org):
    tmp_path, config, _ = org
    done = subprocess.run([sys.executable, "-m", "jax_codemod.integrations.all_repos", "-C", str(config),
                           "--select", "JAX999"], check=False, cwd=tmp_path, capture_output=True, text=True, env=ENV)
    assert done.returncode == 2 and "JAX999" in done.stderr


def test_bad_target_platforms_is_a_usage_error_before_any_repository_is_touched(org):
    tmp_path, config, _ = org
    done = subprocess.run([sys.executable, "-m", "jax_codemod.integrations.all_repos", "-C", str(config),
                           "--target-platforms", "tpu,abacus!"], check=False, cwd=tmp_path, capture_output=True,
                          text=True, env=ENV)
    assert done.returncode == 2 and "target-platforms" in done.stderr, done.stderr


# The engine side, without all-repos ------------------------------------------------------------


def test_in_process_run_writes_what_codemod_run_writes(tmp_path):
    files = {"a.py": BROKEN, "ref.py": REPORT_ONLY, "c.py": CLEAN,
             "pyproject.toml": b'[tool.codemod]\nper-file-ignores = { "skip.py" = ["JAX005"] }\n', "skip.py": BROKEN}
    for root in ("engine", "cli"):
        for name, content in files.items():
            (tmp_path / root / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / root / name).write_bytes(content)
    invoke(["run", "--no-cache", "."], cwd=tmp_path / "cli")
    previous = os.getcwd()
    os.chdir(tmp_path / "engine")
    try:
        run = run_codemod(".", Options(), write=True, jobs=1)
    finally:
        os.chdir(previous)
    assert tree_bytes(tmp_path / "engine") == tree_bytes(tmp_path / "cli")
    assert (tmp_path / "engine" / "skip.py").read_bytes() == BROKEN  # per-file-ignores honoured
    assert [r.path for r in run.changed] == ["./a.py"]
    assert [(f.path, f.line) for f in run.remaining] == [("./ref.py", 3)]


def test_a_run_with_errors_writes_nothing(tmp_path):
    (tmp_path / "a.py").write_bytes(BROKEN)
    (tmp_path / "bad.py").write_bytes(b"x = jax.dlpack.to_dlpack(\n")
    run = run_codemod(str(tmp_path), Options(), write=True, jobs=1)
    assert run.errors and run.changed
    assert (tmp_path / "a.py").read_bytes() == BROKEN


def test_commit_message_and_reproduce_command(tmp_path):
    (tmp_path / "a.py").write_bytes(BROKEN + b"y = jax.dlpack.to_dlpack(z)\n")
    (tmp_path / "ref.py").write_bytes(REPORT_ONLY)
    options = Options(select=["JAX005"], unsafe_fixes=True, target_jax_version="0.7")
    message = commit_message(run_codemod(str(tmp_path), options, write=False, jobs=1), options)
    subject, blank, *_ = message.splitlines()
    assert (subject, blank) == ("codemod: fix broken JAX interop code (JAX005 ×2)", "")
    assert "codemod 0" in message and "fixed 2 finding(s) in 1 file(s)" in message
    assert "- `ref.py:3:14` JAX005 removed-dlpack-api:" in message
    assert reproduce_command(options) == "codemod run --select JAX005 --unsafe-fixes --target-jax-version 0.7 ."
    assert message.endswith(f"    {reproduce_command(options)}")


@pytest.mark.parametrize(
    ("direct_url", "spec"),
    [
        (None, "jax-codemod==0.2.0"),  # from an index: the release is there
        ({"url": "https://user:token@github.com/o/codemod", "vcs_info": {"vcs": "git", "commit_id": "abc123",
                                                                          "requested_revision": "v0.2.0"}},
         "jax-codemod @ git+https://github.com/o/codemod@abc123"),
        ({"url": "https://example.com/jax_codemod-0.2.0-py3-none-any.whl", "archive_info": {}},
         "jax-codemod @ https://example.com/jax_codemod-0.2.0-py3-none-any.whl"),
        ({"url": "file:///home/me/codemod", "dir_info": {"editable": True}}, None),
        ({"url": "file:///tmp/dist/jax_codemod-0.2.0-py3-none-any.whl", "archive_info": {}}, None),
    ],
    ids=["index", "git", "archive", "checkout", "local-wheel"],
)
def test_install_spec_is_what_this_codemod_was_installed_from(monkeypatch, direct_url, spec):
    from importlib import metadata

    from jax_codemod.integrations import all_repos

    class Distribution:
        version = "0.2.0"

        def read_text(self, name):
            assert name == "direct_url.json"
            return None if direct_url is None else json.dumps(direct_url)

    monkeypatch.setattr(metadata, "distribution", lambda name: Distribution())
    assert all_repos.install_spec() == spec


def test_commit_message_installs_from_the_spec(tmp_path):
    (tmp_path / "a.py").write_bytes(BROKEN)
    options = Options()
    run = run_codemod(str(tmp_path), options, write=False, jobs=1)
    message = commit_message(run, options, "jax-codemod @ git+https://github.com/o/codemod@v0.2.0")
    assert "    pip install 'jax-codemod @ git+https://github.com/o/codemod@v0.2.0'\n    codemod run ." in message
    assert "jax-codemod==" not in commit_message(run, options)


def test_triggers_are_those_of_the_selected_rules():
    assert trigger_strings(Options(select=["JAX003"])) == ["dl_device"]
    everything = trigger_strings(Options())
    assert {"to_dlpack", "dl_device", "from_dlpack", "unsafe_buffer_pointer"} <= set(everything)


def test_readme_commands_parse():
    pytest.importorskip("all_repos", reason="all-repos is not installed (the optional extra jax-codemod[all-repos])")
    import re
    import shlex

    from jax_codemod.integrations.all_repos import parser

    readme = (REPO / "docs" / "ci.md").read_text()
    section = readme[readme.index("## Migrating an organisation"):]
    commands = re.findall(r"^codemod-all-repos [^#\n]*", section, flags=re.MULTILINE)
    assert len(commands) >= 3
    for command in commands:
        parser().parse_args(shlex.split(command)[1:])
    assert "pip install '.[all-repos]'" in section
    assert '"source": "all_repos.source.github_org"' in section


def test_run_codemod_fixes_notebooks_as_codemod_run_does(tmp_path):
    notebook = REPO / "tests" / "snapshots" / "notebooks" / "rewrite_cells_share_imports.ipynb"
    (tmp_path / "nb.ipynb").write_bytes(notebook.read_bytes())
    run = run_codemod(str(tmp_path), Options(), write=True, jobs=1)
    assert not run.errors and [r.path for r in run.changed] == [str(tmp_path / "nb.ipynb")]
    assert b"from_dlpack(x)" in (tmp_path / "nb.ipynb").read_bytes()
    assert "- `" not in commit_message(run, Options())  # nothing left for a person


HOST_EXPORT = b"import jax.numpy as jnp\nimport numpy as np\n\nx = jnp.arange(3.0)\ny = np.from_dlpack(x)\n"


def test_target_platforms_reaches_the_run_and_the_reproduce_command(tmp_path):
    # A DLPack export to the host is right on CPU and GPU and refused on a TPU (JAX004): the
    # organisation-wide run must be able to say which platforms its repositories run on.
    (tmp_path / "a.py").write_bytes(HOST_EXPORT)
    previous = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert not run_codemod(".", Options(), write=False, jobs=1).changed
        options = Options(target_platforms="cpu,tpu")
        run = run_codemod(".", options, write=False, jobs=1)
    finally:
        os.chdir(previous)
    assert [r.path for r in run.changed] == ["./a.py"]
    assert b"ensure_exportable(x)" in run.changed[0].fixed
    assert reproduce_command(options) == "codemod run --target-platforms cpu,tpu ."
