"""Bulk migration: many roots, the --report file, the result cache, --shard, the progress bar."""

from __future__ import annotations

import ast
import json
import os
import pty
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_cli import BROKEN, CLEAN, FIXED, REPO, REPORT_ONLY, invoke

# Correct code that no rule's prefilter lets through to the parser.
CLEAN_NO_TRIGGER = b"import torch\n\nt = torch.ones(3)\n"

import jax_codemod
from jax_codemod.cli.main import EXIT_ATTENTION, EXIT_OK, EXIT_USAGE, progress_wanted
from jax_codemod.engine import cache as cache_module
from jax_codemod.engine.discovery import discover
from jax_codemod.engine.shard import Shard, shard_key


def git(*args, cwd):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def make_repo(path: Path, files: dict[str, bytes]) -> Path:
    path.mkdir(parents=True)
    for name, content in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_bytes(content)
    git("init", "-q", cwd=path)
    git("add", "-A", cwd=path)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init", cwd=path)
    return path


# Many roots and the --report file --------------------------------------------------------------


@pytest.fixture
def repos(tmp_path: Path):
    a = make_repo(tmp_path / "repo-a", {"pkg/broken.py": BROKEN, "clean.py": CLEAN})
    b = make_repo(tmp_path / "repo-b", {"x.py": BROKEN, "ref.py": REPORT_ONLY})
    return tmp_path, a, b


def test_many_roots_per_root_summary_and_report(repos):
    workdir, _a, _b = repos
    code, out, err = invoke(["run", "--dry-run", "--report", "report.json", "repo-a", "repo-b"], cwd=workdir)
    assert code == EXIT_ATTENTION
    assert "repo-a: 2 files scanned, 1 would change, 0 failed; findings: JAX005 1" in err
    assert "repo-b: 2 files scanned, 1 would change, 0 failed; findings: JAX005 2" in err
    assert err.strip().splitlines()[-1].startswith("4 files scanned, 2 would change")
    report = json.loads((workdir / "report.json").read_text())
    assert report["mode"] == "dry-run" and report["summary"]["files_scanned"] == 4
    assert [root["root"] for root in report["roots"]] == ["repo-a", "repo-b"]
    root_a, root_b = report["roots"]
    assert root_a["summary"]["files_changed"] == 1 and root_b["summary"]["findings"] == 2
    assert [change["path"] for change in root_a["changes"]] == ["pkg/broken.py"]
    assert root_a["changes"][0]["codes"] == ["JAX005"]
    assert sorted(f["path"] for f in root_b["findings"]) == ["ref.py", "x.py"]
    assert {c["path"] for c in report["changes"]} == {"repo-a/pkg/broken.py", "repo-b/x.py"}
    assert out.count("--- a/") == 2  # the patch on stdout is unchanged by --report


def test_report_patch_per_root_applies_inside_each_repository(repos):
    """One pull request per repository: each root's diffs apply with git inside that repository."""
    workdir, a, b = repos
    invoke(["run", "--check", "--report", "report.json", "repo-a", "repo-b"], cwd=workdir)
    report = json.loads((workdir / "report.json").read_text())
    for root, repo in zip(report["roots"], (a, b)):
        patch = "".join(change["diff"] for change in root["changes"])
        subprocess.run(["git", "apply", "--index", "-"], input=patch.encode(), cwd=repo, check=True)
    assert (a / "pkg/broken.py").read_bytes() == FIXED and (b / "x.py").read_bytes() == FIXED
    assert (b / "ref.py").read_bytes() == REPORT_ONLY


def test_report_in_fix_mode_lists_the_written_changes(repos):
    workdir, a, _b = repos
    code, _, _ = invoke(["run", "--report", "r.json", "repo-a"], cwd=workdir)
    assert code == EXIT_OK
    (root,) = json.loads((workdir / "r.json").read_text())["roots"]
    (change,) = root["changes"]
    assert change["path"] == "pkg/broken.py" and "+t = torch.from_dlpack(x)" in change["diff"]
    assert (a / "pkg/broken.py").read_bytes() == FIXED


def test_single_root_prints_no_per_root_lines(repos):
    workdir, _a, _b = repos
    _, _, err = invoke(["run", "--check", "repo-a"], cwd=workdir)
    lines = err.strip().splitlines()
    assert lines[-1].startswith("2 files scanned")
    assert not [line for line in lines if line.startswith("repo-a")]  # no per-root line


def test_overlapping_roots_check_each_file_once(repos):
    workdir, a, _b = repos
    code, _, err = invoke(["run", "--report", "r.json", "repo-a", "repo-a/pkg"], cwd=workdir)
    assert code == EXIT_OK, err
    assert "3 files scanned" not in err and "2 files scanned, 1 changed, 0 failed" in err
    assert (a / "pkg/broken.py").read_bytes() == FIXED
    roots = json.loads((workdir / "r.json").read_text())["roots"]
    assert [r["summary"]["files_scanned"] for r in roots] == [2, 0]


def test_missing_root_is_reported_in_its_own_entry(repos):
    workdir, _a, _b = repos
    code, _, _ = invoke(["run", "--check", "--report", "r.json", "repo-a", "nope"], cwd=workdir)
    assert code == EXIT_ATTENTION
    roots = json.loads((workdir / "r.json").read_text())["roots"]
    assert roots[1]["errors"][0]["message"] == "no such file or directory"
    assert roots[0]["errors"] == []


def test_unwritable_report_is_a_usage_error(repos):
    workdir, _a, _b = repos
    code, _, err = invoke(["run", "--check", "--report", "no/such/dir/r.json", "repo-a"], cwd=workdir)
    assert code == EXIT_USAGE and "r.json" in err


# The cache ----------------------------------------------------------------------------------------


@pytest.fixture
def parses(monkeypatch):
    """The files the engine parses with ``ast`` during a run (the expensive step the cache skips)."""
    seen: list[str] = []
    real_parse = ast.parse

    def counting(source, filename="<unknown>", *args, **kwargs):
        seen.append(os.path.basename(str(filename)))
        return real_parse(source, filename, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", counting)
    return seen


@pytest.fixture
def cached_tree(tmp_path, monkeypatch):
    cache_dir = tmp_path / "cache"
    monkeypatch.setenv("CODEMOD_CACHE_DIR", str(cache_dir))
    tree = tmp_path / "src"
    tree.mkdir()
    (tree / "broken.py").write_bytes(BROKEN)
    (tree / "clean.py").write_bytes(CLEAN_NO_TRIGGER)
    (tree / "ref.py").write_bytes(REPORT_ONLY)
    (tree / "plain.py").write_bytes(b"x = 1\n")
    return tree, cache_dir


def run_json(tree, *flags):
    code, out, _ = invoke(["run", "-j", "1", "--format", "json", *flags, tree])
    return code, json.loads(out)


def test_repeat_run_parses_nothing_and_gives_the_same_result(cached_tree, parses):
    tree, cache_dir = cached_tree
    uncached = run_json(tree, "--dry-run", "--no-cache")
    assert not cache_dir.exists()
    parses.clear()
    first = run_json(tree, "--dry-run")
    assert sorted(set(parses)) == ["broken.py", "ref.py"]  # the prefilter skips the other two
    parses.clear()
    second = run_json(tree, "--dry-run")
    assert parses == []
    assert uncached == first == second
    assert second[1]["diffs"] and second[1]["summary"]["findings"] == 2


def test_cached_fix_is_validated_before_it_is_written(cached_tree, parses):
    tree, _ = cached_tree
    run_json(tree, "--check")
    parses.clear()
    code, document = run_json(tree)
    assert parses == ["broken.py"]  # the fixed bytes, re-checked as a fresh fix is; ref.py not at all
    assert (tree / "broken.py").read_bytes() == FIXED
    assert document["summary"]["files_changed"] == 1 and code == EXIT_ATTENTION  # ref.py is unfixable


def test_changed_file_misses(cached_tree, parses):
    tree, _ = cached_tree
    run_json(tree, "--check")
    (tree / "ref.py").write_bytes(REPORT_ONLY + b"more = [jax.dlpack.to_dlpack]\n")
    parses.clear()
    _, document = run_json(tree, "--check")
    assert set(parses) == {"ref.py"}
    assert [f["line"] for f in document["findings"] if f["path"].endswith("ref.py")] == [3, 4]


@pytest.mark.parametrize(
    "change",
    [
        ["--ignore", "JAX005"],
        ["--unsafe-fixes"],
        ["--config", "OPTIONS"],
    ],
)
def test_changed_settings_miss(cached_tree, parses, change, tmp_path):
    tree, _ = cached_tree
    if "OPTIONS" in change:
        config = tmp_path / "elsewhere" / "pyproject.toml"  # not governing the tree unless named
        config.parent.mkdir()
        config.write_text('[tool.codemod]\nhelper-module = "my.helpers"\n')
        change = ["--config", str(config)]
    # A placement word: JAX002 reads the file (one that can place nothing it decides from the text).
    (tree / "ref.py").write_bytes(REPORT_ONLY + b"put = jax.device_put\n")
    run_json(tree, "--check")
    parses.clear()
    run_json(tree, "--check", *change)
    assert "ref.py" in parses  # other rules still look at it, under settings not cached yet
    parses.clear()
    run_json(tree, "--check", *change)
    assert parses == []  # the new settings have entries of their own now


def test_tool_change_invalidates(cached_tree, parses, monkeypatch):
    tree, _ = cached_tree
    run_json(tree, "--check")
    monkeypatch.setattr(jax_codemod, "__version__", "99.0.0")
    cache_module.code_fingerprint.cache_clear()
    parses.clear()
    try:
        run_json(tree, "--check")
    finally:
        cache_module.code_fingerprint.cache_clear()
    assert set(parses) == {"broken.py", "ref.py"}


def test_the_cache_fingerprint_follows_the_installed_libcst(tmp_path, monkeypatch):
    # Read from libcst's version module, not through importlib.metadata (start-up time): a
    # different libcst (a different parser) must still change every key.
    import importlib.util
    import types

    package = tmp_path / "libcst"
    package.mkdir()
    (package / "__init__.py").write_text("")
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name: types.SimpleNamespace(origin=str(package / "__init__.py"))
    )
    assert cache_module._libcst_version() == "unknown"  # no version module: still a value
    (package / "_version.py").write_text("__version__ = '1.8.5'\n")
    first = cache_module._libcst_version()
    (package / "_version.py").write_text("__version__ = '1.8.6'\n")
    assert cache_module._libcst_version() not in (first, "unknown")


def test_damaged_entries_are_misses(cached_tree, parses):
    tree, cache_dir = cached_tree
    expected = run_json(tree, "--dry-run")
    entries = [p for p in cache_dir.rglob("*.json")]
    assert len(entries) == 2
    for entry in entries:
        entry.write_bytes(entry.read_bytes()[:10])
    parses.clear()
    assert run_json(tree, "--dry-run") == expected
    assert set(parses) == {"broken.py", "ref.py"}


def test_cache_directory_defaults_beside_pyproject_and_stays_out_of_git(tmp_path, monkeypatch):
    monkeypatch.delenv("CODEMOD_CACHE_DIR")
    (tmp_path / "pyproject.toml").write_text("[tool.codemod]\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "ref.py").write_bytes(REPORT_ONLY)
    invoke(["run", "--check", "src"], cwd=tmp_path)
    cache_dir = tmp_path / ".codemod_cache"
    assert (cache_dir / ".gitignore").read_text().splitlines()[-1] == "*"
    assert (cache_dir / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    assert len(list(cache_dir.rglob("*.json"))) == 1
    other = tmp_path / "elsewhere"
    invoke(["run", "--check", "--cache-dir", other, "src"], cwd=tmp_path)
    assert len(list(other.rglob("*.json"))) == 1


def test_concurrent_runs_share_a_cache_safely(tmp_path):
    """Parallel runs writing one cache: every run sees whole entries and the same results."""
    tree = tmp_path / "src"
    tree.mkdir()
    for i in range(60):
        (tree / f"m{i:02}.py").write_bytes(BROKEN if i % 2 else REPORT_ONLY)
    command = [sys.executable, "-m", "jax_codemod.cli", "run", "--dry-run", "--format", "json", "-j", "2", str(tree)]
    env = dict(os.environ, PYTHONPATH=str(REPO), CODEMOD_CACHE_DIR=str(tmp_path / "cache"))
    baseline = subprocess.run([*command, "--no-cache"], check=False, capture_output=True, cwd=REPO, env=env).stdout
    runs = [subprocess.Popen(command, stdout=subprocess.PIPE, cwd=REPO, env=env) for _ in range(3)]
    outputs = [run.communicate()[0] for run in runs]
    again = subprocess.run(command, check=False, capture_output=True, cwd=REPO, env=env).stdout
    assert json.loads(baseline)["summary"]["findings"] == 60
    assert all(output == baseline for output in [*outputs, again])
    assert not [p for p in (tmp_path / "cache").rglob("*") if p.name.endswith(".tmp")]


# Shards -------------------------------------------------------------------------------------------


@pytest.fixture
def many(tmp_path):
    root = tmp_path / "mono"
    for i in range(50):
        path = root / f"pkg{i % 7}" / f"mod{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(REPORT_ONLY)
    return root


@pytest.mark.parametrize("count", [1, 2, 3, 8])
def test_shards_cover_every_file_exactly_once(many, count):
    everything = set()
    scanned = 0
    seen_per_shard = []
    for index in range(1, count + 1):
        code, out, _ = invoke(["run", "--check", "--format", "json", "--shard", f"{index}/{count}", many])
        assert code == (EXIT_ATTENTION if json.loads(out)["findings"] else EXIT_OK)
        document = json.loads(out)
        paths = {f["path"] for f in document["findings"]}
        seen_per_shard.append(paths)
        everything |= paths
        scanned += document["summary"]["files_scanned"]
    all_files = {f["path"] for f in json.loads(invoke(["run", "--check", "--format", "json", many])[1])["findings"]}
    assert everything == all_files and len(all_files) == 50
    assert scanned == 50
    assert sum(len(paths) for paths in seen_per_shard) == 50  # pairwise disjoint
    if count > 1:
        assert all(len(paths) < 50 for paths in seen_per_shard)


def test_shard_partition_does_not_depend_on_checkout_or_hash_seed(many, tmp_path):
    copy = tmp_path / "elsewhere" / "checkout"
    shutil.copytree(many, copy)
    keys = [shard_key(p, str(many)) for p in discover([str(many)]).files]
    assert keys == [shard_key(p, str(copy)) for p in discover([str(copy)]).files]
    probe = (
        "import sys; from jax_codemod.engine.shard import Shard; "
        "print([k for k in sys.argv[1:] if Shard(2, 3).owns(k)])"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", probe, *keys],
            check=False,
            capture_output=True,
            text=True,
            cwd=REPO,
            env=dict(os.environ, PYTHONPATH=str(REPO), PYTHONHASHSEED=seed),
        ).stdout
        for seed in ("1", "2")
    }
    assert len(outputs) == 1 and "mod" in outputs.pop()


@settings(max_examples=200, deadline=None)
@given(
    keys=st.sets(st.text(alphabet="ab/._é", min_size=1, max_size=12), max_size=40),
    count=st.integers(min_value=1, max_value=9),
)
def test_shards_partition_any_file_list(keys, count):
    shards = [set(Shard(index, count).select(keys, ".")) for index in range(1, count + 1)]
    assert set().union(*shards) == keys
    assert sum(map(len, shards)) == len(keys)


def test_shard_of_a_file_root_uses_its_name():
    assert shard_key("a/b/c.py", "a/b/c.py") == "c.py"
    assert Shard.parse(" 2 / 5 ") == Shard(2, 5)


@pytest.mark.parametrize("spec", ["0/3", "4/3", "1/0", "a/b", "3"])
def test_bad_shard_is_a_usage_error(spec, tmp_path):
    code, _, err = invoke(["run", "--check", "--shard", spec, tmp_path])
    assert code == EXIT_USAGE and "--shard" in err


# The progress bar ---------------------------------------------------------------------------------


def run_on_terminal(args, env):
    """Run the CLI with stderr on a pseudo-terminal; returns what the terminal showed."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "jax_codemod.cli", *args],
        stdout=subprocess.DEVNULL,
        stderr=follower,
        cwd=REPO,
        env=env,
    )
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        shown += chunk
    process.wait()
    os.close(leader)
    return shown.decode(errors="replace")


def test_progress_bar_on_a_terminal_shows_rate_and_eta(tree_of_many):
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env.update(PYTHONPATH=str(REPO), TERM="xterm")
    shown = run_on_terminal(["run", "--check", "--no-cache", str(tree_of_many)], env)
    assert "Checking" in shown and "files/s" in shown and "files scanned" in shown
    quiet = run_on_terminal(["run", "--check", str(tree_of_many)], dict(env, CI="true"))
    assert "Checking" not in quiet and "files scanned" in quiet


@pytest.fixture
def tree_of_many(tmp_path):
    for i in range(5):
        (tmp_path / f"m{i}.py").write_bytes(BROKEN)
    return tmp_path


class _Stream:
    def __init__(self, tty):
        self.tty = tty

    def isatty(self):
        return self.tty


def test_progress_wanted_only_for_a_person_at_a_terminal():
    assert progress_wanted(_Stream(True), {"TERM": "xterm"})
    assert not progress_wanted(_Stream(False), {"TERM": "xterm"})
    assert not progress_wanted(_Stream(True), {"TERM": "xterm", "CI": "true"})
    assert not progress_wanted(_Stream(True), {"TERM": "dumb"})


def test_unusable_cache_directory_never_fails_a_run(cached_tree, monkeypatch, tmp_path):
    tree, _ = cached_tree
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory\n")
    expected = run_json(tree, "--dry-run", "--no-cache")
    monkeypatch.setenv("CODEMOD_CACHE_DIR", str(blocker / "cache"))
    assert run_json(tree, "--dry-run") == expected
    assert blocker.read_text() == "not a directory\n"
