"""The analysed tree is attacker-controlled (an autofix bot on pull requests): every attack of
issue 19, as a fixture repository with a crafted cache, links, hostile names or config.

Nothing in the tree may choose what codemod writes, where it writes, or what a CI log or job
summary shows.
"""

from __future__ import annotations

import base64
import json
import os
import re
import resource
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from jax_codemod.cli.main import EXIT_ATTENTION, EXIT_OK, EXIT_USAGE
from jax_codemod.engine import cache as cache_module
from jax_codemod.engine import interrupts, runner
from jax_codemod.engine.pipeline import MAX_FIX_BYTES, Settings, file_active_rules
from jax_codemod.rules.removed_dlpack_api import RemovedDlpackApi
from test_bulk import git, make_repo
from test_cli import BROKEN, FIXED, REPO, invoke

# Mentions the trigger in a comment only: no finding, so it must never be written.
INNOCENT = b"# converts with dlpack elsewhere\nx = 1\n"
PAYLOAD = b"import os\nos.system('id')\n"


@pytest.fixture
def user_cache(tmp_path, monkeypatch):
    """The user's own cache directory (where the secret key lives), outside every tree."""
    home = tmp_path / "user-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    return home / "codemod"


@pytest.fixture
def checkout(tmp_path, monkeypatch, user_cache):
    """A pull request's tree with its own pyproject.toml: the default cache is inside it."""
    monkeypatch.delenv("CODEMOD_CACHE_DIR", raising=False)
    tree = tmp_path / "pr"
    tree.mkdir()
    (tree / "pyproject.toml").write_text("[tool.codemod]\n")
    return tree


def default_settings(tree: Path) -> Settings:
    """The settings a plain ``codemod run`` uses in ``tree`` (so the attacker's keys match)."""
    from jax_codemod.engine.resolve import Options, resolve

    [group] = resolve([str(tree)], Options())
    return group.settings


def forge(cache_dir: Path, tree: Path, relative: str, document: dict, mac: bytes | None) -> Path:
    """An entry for ``tree/relative`` made from public inputs only, as an attacker can."""
    path = str(tree / relative)
    source = (tree / relative).read_bytes()
    fingerprint = cache_module.settings_fingerprint(default_settings(tree))
    active = file_active_rules(path, source, default_settings(tree).rules)
    for candidate in {path, os.path.relpath(path), relative, f"./{relative}"}:
        key = cache_module.Cache(str(cache_dir), fingerprint).key(source, candidate, active)
        entry = cache_dir / cache_module.FORMAT / key[:2] / (key[2:] + ".json")
        entry.parent.mkdir(parents=True, exist_ok=True)
        body = json.dumps(document).encode()
        entry.write_bytes(body if mac is None else mac + b"\n" + body)
    return entry


def _fixed_document(fixed: bytes) -> dict:
    finding = {
        "code": "JAX005", "name": "removed-dlpack-api", "line": 1, "column": 1, "message": "m",
        "fix": "safe", "span": [1, 0, 1, 1], "node_type": "Call", "applied": True,
    }
    return {"findings": [finding], "fixed": base64.b64encode(fixed).decode()}


# The cache -----------------------------------------------------------------------------------


@pytest.mark.parametrize("mac", [None, b"0" * 64, b"forged"], ids=["no-mac", "zero-mac", "junk-mac"])
def test_a_committed_cache_entry_cannot_replace_a_file(checkout, mac):
    (checkout / "innocent.py").write_bytes(INNOCENT)
    forge(checkout / ".codemod_cache", checkout, "innocent.py", _fixed_document(PAYLOAD), mac)
    code, _, err = invoke(["run", "."], cwd=checkout)
    assert (checkout / "innocent.py").read_bytes() == INNOCENT
    assert code == EXIT_OK and "no findings" in err


@pytest.mark.parametrize("mac", [None, b"0" * 64], ids=["no-mac", "zero-mac"])
def test_a_committed_cache_entry_cannot_hide_a_finding(checkout, mac):
    (checkout / "broken.py").write_bytes(BROKEN)
    forge(checkout / ".codemod_cache", checkout, "broken.py", {"findings": [], "fixed": None}, mac)
    code, out, _ = invoke(["run", "--check", "."], cwd=checkout)
    assert code == EXIT_ATTENTION and "broken.py:4:23: JAX005" in out


def test_the_key_lives_in_the_user_cache_directory_private(checkout, user_cache):
    (checkout / "broken.py").write_bytes(BROKEN)
    invoke(["run", "--check", "."], cwd=checkout)
    key = user_cache / cache_module.KEY_FILE
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and key.stat().st_size == cache_module.KEY_BYTES
    assert not list(checkout.rglob("secret-key"))
    assert len(list((checkout / ".codemod_cache").rglob("*.json"))) == 1  # and the cache works


def test_a_key_others_can_read_turns_the_cache_off(checkout, user_cache):
    user_cache.mkdir(parents=True)
    key = user_cache / cache_module.KEY_FILE
    key.write_bytes(b"k" * cache_module.KEY_BYTES)
    key.chmod(0o644)
    (checkout / "broken.py").write_bytes(BROKEN)
    code, out, _ = invoke(["run", "--check", "."], cwd=checkout)
    assert code == EXIT_ATTENTION and "JAX005" in out
    assert not list(checkout.rglob("*.json"))


def _signed_entry(tree: Path, relative: str, fixed: bytes) -> None:
    """A genuine entry (made with the user's key) that holds bad bytes: a bug, a bit flip."""
    settings = default_settings(tree)
    cache = cache_module.Cache.open(str(tree / ".codemod_cache"), settings)
    source = (tree / relative).read_bytes()
    result = cache.process(source, str(tree / relative), settings)
    assert result.changed
    document = _fixed_document(fixed)
    active = file_active_rules(str(tree / relative), source, settings.rules)
    key = cache.key(source, str(tree / relative), active)
    folders, name = cache._location(key)
    body = json.dumps(document).encode()
    entry = tree / ".codemod_cache" / Path(*folders) / name
    entry.write_bytes(cache._mac(key, body).encode() + b"\n" + body)


@pytest.mark.parametrize(
    "fixed",
    [b"def broken(:\n", BROKEN + b"y = jax.dlpack.to_dlpack(z)\n"],
    ids=["does-not-parse", "still-has-fixable-findings"],
)
def test_a_cached_fix_is_validated_as_a_fresh_one_before_it_is_written(checkout, fixed):
    (checkout / "broken.py").write_bytes(BROKEN)
    _signed_entry(checkout, "broken.py", fixed)
    code, _, err = invoke(["run", str(checkout / "broken.py")], cwd=checkout)
    assert (checkout / "broken.py").read_bytes() == BROKEN
    assert code == EXIT_ATTENTION and "cached fix failed validation" in err


def test_a_result_without_a_fixed_finding_is_never_written(tmp_path):
    path = tmp_path / "innocent.py"
    path.write_bytes(INNOCENT)
    result = runner.FileResult(path=str(path), findings=[], source=INNOCENT, fixed=PAYLOAD)
    (error,) = runner.write_results([result])
    assert "no finding" in error.message and path.read_bytes() == INNOCENT


@pytest.mark.parametrize("link", [".codemod_cache", ".codemod_cache/CACHEDIR.TAG", ".codemod_cache/.gitignore",
                                  f".codemod_cache/{cache_module.FORMAT}"])
def test_the_cache_never_writes_through_a_link(checkout, tmp_path, link):
    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside / "target"
    if link == ".codemod_cache" or link.endswith(cache_module.FORMAT):
        target.mkdir()
    if link != ".codemod_cache":
        (checkout / ".codemod_cache").mkdir()
    (checkout / link).symlink_to(target)
    (checkout / "ref.py").write_bytes(b"import jax.dlpack\n\nexporters = [jax.dlpack.to_dlpack]\n")
    code, out, _ = invoke(["run", "--check", "."], cwd=checkout)
    assert code == EXIT_ATTENTION and "JAX005" in out
    assert not target.exists() or (target.is_dir() and not list(target.iterdir()))
    assert list(outside.iterdir()) == ([target] if target.exists() else [])


# Writes only inside the roots ------------------------------------------------------------------


def test_report_through_a_symlink_is_refused(checkout, tmp_path):
    (checkout / "broken.py").write_bytes(BROKEN)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (checkout / "report.json").symlink_to(victim)
    code, _, err = invoke(["run", "--check", "--report", "report.json", "."], cwd=checkout)
    assert code == EXIT_USAGE and "symbolic link" in err
    assert victim.read_text() == "precious\n" and (checkout / "report.json").is_symlink()


def test_report_is_replaced_by_rename_not_written_in_place(checkout):
    (checkout / "broken.py").write_bytes(BROKEN)
    (checkout / "report.json").write_text("old")
    os.link(checkout / "report.json", checkout / "other-name")
    code, _, _ = invoke(["run", "--check", "--report", "report.json", "."], cwd=checkout)
    assert code == EXIT_ATTENTION
    assert json.loads((checkout / "report.json").read_text())["summary"]["findings"] == 1
    assert (checkout / "other-name").read_text() == "old"  # a hard link is not written through
    assert not [p for p in checkout.iterdir() if p.name.endswith(runner.TEMP_SUFFIX)]


def test_an_explicitly_named_symlink_out_of_the_roots_is_refused(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "theirs.py").write_bytes(BROKEN)
    (root / "link.py").symlink_to(outside / "theirs.py")
    # As a pre-commit hook or CI bot runs it: from the checkout, naming the file the tree holds.
    code, _, err = invoke(["run", "link.py"], cwd=root)
    assert (outside / "theirs.py").read_bytes() == BROKEN
    assert code != EXIT_OK and "link.py" in err


def test_hard_links_are_not_split(tmp_path):
    (tmp_path / "a.py").write_bytes(BROKEN)
    os.link(tmp_path / "a.py", tmp_path / "b.py")
    code, _, err = invoke(["run", str(tmp_path / "a.py")])
    assert code == EXIT_ATTENTION and "hard links" in err
    assert (tmp_path / "a.py").read_bytes() == (tmp_path / "b.py").read_bytes() == BROKEN
    assert (tmp_path / "a.py").stat().st_ino == (tmp_path / "b.py").stat().st_ino


def test_extended_attributes_are_kept(tmp_path):
    path = tmp_path / "a.py"
    path.write_bytes(BROKEN)
    try:
        os.setxattr(path, "user.codemod-test", b"kept")
    except OSError:
        pytest.skip("no user xattrs on this file system")
    assert invoke(["run", str(path)])[0] == EXIT_OK
    assert path.read_bytes() == FIXED and os.getxattr(path, "user.codemod-test") == b"kept"


def test_a_temporary_left_by_a_killed_run_is_removed_by_the_next(tmp_path):
    (tmp_path / "a.py").write_bytes(BROKEN)
    stale = tmp_path / runner._temporary_name("a.py")
    stale.write_bytes(BROKEN[:10])
    old = time.time() - 2 * runner.STALE_TEMP_SECONDS
    os.utime(stale, (old, old))
    fresh = tmp_path / runner._temporary_name("b.py")  # a concurrent run's, being written now
    fresh.write_bytes(b"")
    assert invoke(["run", str(tmp_path)])[0] == EXIT_OK
    assert not stale.exists() and fresh.exists()


# Output that cannot be hijacked ----------------------------------------------------------------

HOSTILE_DIR = "x\n::error file=evil.py::pwned\n::add-mask::y\n::stop-commands::z"


def test_text_output_escapes_control_characters_in_names_and_messages(tmp_path):
    hostile = tmp_path / HOSTILE_DIR
    hostile.mkdir()
    (hostile / "a.py").write_bytes(BROKEN)
    (tmp_path / "::warning::b.py").write_bytes(BROKEN)
    # An expression's source (in JAX004's message) with a comment line that reads as a command.
    (tmp_path / "m.py").write_bytes(
        b"import numpy as np\nimport jax.numpy as jnp\n\ndef f():\n    x = jnp.ones(3)\n"
        b"    return (np  # x\n#::error::boom\x1b[2J\n  ).from_dlpack(x)\n"
    )
    (tmp_path / "pyproject.toml").write_text('[tool.codemod]\ntarget-platforms = ["cpu", "tpu"]\n')
    code, out, err = invoke(["run", "--check", "--extend-select", "JAX004", "."], cwd=tmp_path)
    assert code == EXIT_ATTENTION
    lines = (out + err).splitlines()
    # JAX005 and JAX004 (a TPU target: to_dlpack reads the array) in each named file, JAX004 in m.py.
    assert len([line for line in lines if re.search(r":\d+:\d+: JAX00", line)]) == 5
    assert not [line for line in lines if line.lstrip().startswith("::")], lines
    assert "\x1b" not in out + err
    assert r"x\n::error file=evil.py::pwned" in out and r"#::error::boom\x1b[2J" in out


def test_dry_run_patch_with_a_header_forging_directory_name_targets_the_right_file(tmp_path):
    files = {
        "x\n--- a/other.py\n+++ b/evil.py": BROKEN,
        "other.py": b"keep = 1\n",
        "evil.py": b"keep = 2\n",
        "caf\xe9 \"q\" \\.py": BROKEN,
    }
    repo = make_repo(tmp_path / "repo", {name: content for name, content in files.items()})
    patch = subprocess.run(
        [sys.executable, "-m", "jax_codemod.cli", "run", "--dry-run", "--no-cache", "."],
        cwd=repo, capture_output=True, check=False, env=dict(os.environ, PYTHONPATH=str(REPO)),
    ).stdout
    assert b'--- "a/x\\n--- a/other.py\\n+++ b/evil.py"\t\n' in patch  # git's TAB after a name with a space
    for tool in (["git", "apply", "-"], ["patch", "-p1", "--batch", "--no-backup-if-mismatch"]):
        git("checkout", "-q", ".", cwd=repo)
        if tool[0] == "patch" and subprocess.run(["patch", "--version"], check=False, capture_output=True).returncode:
            continue
        subprocess.run(tool, input=patch, cwd=repo, check=True, capture_output=True)
        for name, content in files.items():
            expected = FIXED if content == BROKEN else content
            assert (repo / name).read_bytes() == expected, (tool[0], name)


def test_sarif_names_a_file_whose_name_is_not_utf8(tmp_path):
    (tmp_path / os.fsdecode(b"caf\xe9.py")).write_bytes(BROKEN)
    code, out, _ = invoke(["run", "--check", "--format", "sarif", "."], cwd=tmp_path)
    assert code == EXIT_ATTENTION
    document = json.loads(out)
    (result,) = document["runs"][0]["results"]
    location = result["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location["uri"] == "caf%E9.py"
    assert "\\udc" not in out


# Config injection -------------------------------------------------------------------------------


def test_a_helper_module_that_is_not_a_dotted_name_is_a_config_error(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.codemod]\nhelper-module = "a import b; import os; os.system(\\"id\\") #"\n'
    )
    (tmp_path / "broken.py").write_bytes(BROKEN)
    code, _, err = invoke(["run", "--extend-select", "ALL", "."], cwd=tmp_path)
    assert code == EXIT_USAGE and "pyproject.toml" in err and "helper-module" in err
    assert (tmp_path / "broken.py").read_bytes() == BROKEN


# Bounded resources ------------------------------------------------------------------------------


def _run_limited(args, cwd: Path, memory: int = 1 << 30, timeout: float = 60):
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    return subprocess.run(
        [sys.executable, "-m", "jax_codemod.cli", *args], cwd=cwd, capture_output=True, timeout=timeout,
        preexec_fn=limit, check=False, env=dict(os.environ, PYTHONPATH=str(REPO)),
    )


@pytest.mark.parametrize("kind", ["dev-zero", "fifo"])
def test_an_ignore_file_that_never_ends_costs_nothing(tmp_path, kind):
    (tmp_path / "broken.py").write_bytes(BROKEN)
    if kind == "fifo":
        os.mkfifo(tmp_path / ".gitignore")
    else:
        (tmp_path / ".gitignore").symlink_to("/dev/zero")
    process = _run_limited(["run", "--check", "--no-cache", "."], tmp_path, timeout=30)
    assert process.returncode == EXIT_ATTENTION and b"JAX005" in process.stdout


def test_a_sparse_huge_file_is_never_read_whole(tmp_path):
    huge = tmp_path / "huge.py"
    with open(huge, "wb") as handle:
        handle.write(b"import jax.dlpack\ny = jax.dlpack.to_dlpack(x)\n#")
        handle.truncate(3 * 2**30)  # sparse: no disk, but 3 GB to whoever reads it whole
    (tmp_path / "broken.py").write_bytes(BROKEN)
    process = _run_limited(["run", "--check", "--no-cache", "."], tmp_path, memory=1 << 30)
    assert process.returncode == EXIT_ATTENTION, process.stderr[-2000:]
    assert b"huge.py: not checked: 3072.0 MiB is over the 4 MiB limit" in process.stderr
    assert b"broken.py:4:23: JAX005" in process.stdout


def test_a_sparse_huge_file_costs_only_its_data(tmp_path):
    with open(tmp_path / "quiet.py", "wb") as handle:  # no trigger anywhere: skipped, as before
        handle.write(b"x = 1\n#")
        handle.truncate(8 * 2**30)
    with open(tmp_path / "deep.py", "wb") as handle:  # a trigger 5 GB in, after a hole
        handle.write(b"x = 1\n#")
        handle.seek(5 * 2**30)
        handle.write(b"\ny = jax.dlpack.to_dlpack(x)\n")
    code, _, err = invoke(["run", "--check", "."], cwd=tmp_path)
    assert code == EXIT_ATTENTION
    assert [line for line in err.splitlines() if line.startswith("error:")] == [
        "error: deep.py: not checked: 5120.0 MiB is over the 4 MiB limit for one file"
    ]


def test_a_dense_file_past_the_scan_limit_is_reported_not_scanned(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "MAX_SCAN_BYTES", 6 * 2**20)
    (tmp_path / "data.py").write_bytes(b"x = 1\n" * (8 * 2**20 // 6))  # no trigger in it
    code, _, err = invoke(["run", "--check", "."], cwd=tmp_path)
    assert code == EXIT_ATTENTION and "data.py: not checked: 8.0 MiB is over the 4 MiB limit" in err


def test_a_file_too_large_for_a_quick_fix_keeps_its_findings_and_is_not_rewritten(tmp_path):
    filler = b"".join(b"value_%07d = %d\n" % (i, i) for i in range(MAX_FIX_BYTES // 20 + 1000))
    content = BROKEN + filler
    assert len(content) > MAX_FIX_BYTES
    (tmp_path / "big.py").write_bytes(content)
    code, out, err = invoke(["run", "."], cwd=tmp_path)
    assert code == EXIT_ATTENTION and "big.py:4:23: JAX005" in out
    assert "over the 1 MiB limit for files that get a fix" in err
    assert (tmp_path / "big.py").read_bytes() == content


def test_a_fix_over_its_cpu_budget_is_abandoned_and_the_file_left_alone(tmp_path, monkeypatch):
    from jax_codemod.engine import pipeline

    monkeypatch.setattr(pipeline, "MAX_FIX_SECONDS", 0.001)
    content = BROKEN + b"".join(b"v%d = f(%d)\n" % (i, i) for i in range(5000))
    (tmp_path / "slow.py").write_bytes(content)
    code, out, err = invoke(["run", "."], cwd=tmp_path)
    assert code == EXIT_ATTENTION and "slow.py:4:23: JAX005" in out
    assert "fix not applied: it took over 0.001 s of CPU" in err
    assert (tmp_path / "slow.py").read_bytes() == content
    import signal as signals

    assert signals.getsignal(signals.SIGVTALRM) is signals.SIG_DFL  # the alarm is put back


def test_jobs_are_capped_at_the_cpus_and_the_work(tmp_path, monkeypatch):
    import concurrent.futures

    started = []

    real = concurrent.futures.ProcessPoolExecutor

    def recording(*args, max_workers=None, **kwargs):
        started.append(max_workers)
        return real(*args, max_workers=max_workers, **kwargs)

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", recording)
    monkeypatch.setattr(runner, "PARALLEL_MIN_BYTES", 0)
    paths = []
    for i in range(3):
        (tmp_path / f"m{i}.py").write_bytes(BROKEN)
        paths.append(str(tmp_path / f"m{i}.py"))
    settings = Settings(rules=(RemovedDlpackApi({}),))
    results = runner.check_files(paths, settings, jobs=64)
    assert all(result.changed for result in results)
    assert started and started[0] <= min(runner.available_cpus(), 3)


# Interrupts -------------------------------------------------------------------------------------


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _wait_for_cpu(process: subprocess.Popen, seconds: float) -> None:
    """Until ``process`` has used ``seconds`` of CPU: a point in its run whatever the load."""
    deadline = time.monotonic() + 120
    while process.poll() is None and time.monotonic() < deadline:
        try:
            if _cpu_seconds(process.pid) >= seconds:
                return
        except (OSError, IndexError):
            return
        time.sleep(0.01)


def _swallowed_interrupt() -> None:
    """What a Ctrl-C that lands in a finalizer leaves: the handler ran, its KeyboardInterrupt
    was dropped ("Exception ignored in ..."), and the code it cut short fails later."""
    try:
        interrupts._remembering_handler(signal.SIGINT, None)
    except KeyboardInterrupt:
        pass


@pytest.fixture
def remembering_interrupts():
    previous = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    interrupts.install()
    yield
    signal.signal(signal.SIGINT, previous)
    interrupts.install()  # the flag back to False for the tests after


def test_a_swallowed_ctrl_c_during_a_fix_is_not_one_files_failure(tmp_path, monkeypatch, remembering_interrupts):
    """The fix that failed because of it (a KeyError from a half-built map) raises the interrupt
    instead of reporting "fix not applied" and going on to the next file."""
    from jax_codemod.engine import pipeline

    def interrupted_rewrite(*args, **kwargs):
        _swallowed_interrupt()
        raise KeyError("a node the interrupted metadata pass never reached")

    monkeypatch.setattr(pipeline, "_apply_rule", interrupted_rewrite)
    settings = Settings(rules=(RemovedDlpackApi({}),))
    with pytest.raises(KeyboardInterrupt):
        pipeline.process_source(BROKEN, "m.py", settings)


def test_a_rule_bug_without_an_interrupt_still_costs_one_file(monkeypatch, remembering_interrupts):
    from jax_codemod.engine import pipeline

    def broken_rewrite(*args, **kwargs):
        raise KeyError("a bug")

    monkeypatch.setattr(pipeline, "_apply_rule", broken_rewrite)
    result = pipeline.process_source(BROKEN, "m.py", Settings(rules=(RemovedDlpackApi({}),)))
    assert result.error is not None and "fix not applied: JAX005 failed: KeyError" in result.error.message


def test_a_swallowed_ctrl_c_stops_a_serial_run_after_the_file(tmp_path, monkeypatch, remembering_interrupts):
    """One swallowed with no error after it: the run stops once that file is checked, before
    the next is read (in the CLI: one line, exit 130, as any Ctrl-C)."""
    from jax_codemod.engine import pipeline

    real = pipeline.process_source
    checked = []

    def swallowing(source, path, *args, **kwargs):
        checked.append(path)
        if len(checked) == 1:
            _swallowed_interrupt()
        return real(source, path, *args, **kwargs)

    monkeypatch.setattr(runner, "process_source", swallowing)
    paths = []
    for i in range(3):
        (tmp_path / f"m{i}.py").write_bytes(BROKEN)
        paths.append(str(tmp_path / f"m{i}.py"))
    with pytest.raises(KeyboardInterrupt):
        runner.check_files(paths, Settings(rules=(RemovedDlpackApi({}),)), jobs=1)
    assert len(checked) == 1


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
@pytest.mark.parametrize(
    ("jobs", "cpu", "then"),
    [("1", 0.3, 0), ("1", 0.6, 0), ("2", 0.3, 1.0)],
    ids=["serial-starting", "serial-checking", "pool-checking"],
)
def test_ctrl_c_prints_one_line_leaves_no_temporaries_and_exits_130(tmp_path, jobs, cpu, then):
    filler = b"".join(b"v%d = %d\n" % (j, j) for j in range(3000 if jobs == "2" else 1000))
    for i in range(40):
        (tmp_path / f"m{i:03}.py").write_bytes(BROKEN + filler)
    process = subprocess.Popen(
        [sys.executable, "-m", "jax_codemod.cli", "run", "--no-cache", "-j", jobs, "."],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=dict(os.environ, PYTHONPATH=str(REPO)), start_new_session=True,
    )
    _wait_for_cpu(process, cpu)  # a point in the run, whatever the machine's load
    time.sleep(then)
    try:
        os.killpg(process.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole group
    except ProcessLookupError:
        pass
    _out, err = process.communicate(timeout=120)
    if process.returncode == EXIT_OK:
        pytest.skip("the run finished before the interrupt")
    assert process.returncode == 130, err
    assert err.decode().splitlines() == ["codemod: interrupted"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    for path in tmp_path.glob("*.py"):
        assert path.read_bytes() in (BROKEN + filler, FIXED + filler)


def test_ctrl_c_while_the_command_is_still_importing_is_one_line_and_130():
    # What the console script does, interrupted between importing the package and cli.main.
    # A process started in the background by a shell without job control (`cmd &`, as a CI
    # script may run the suite) inherits SIGINT ignored, and then Python installs no handler:
    # the script puts back what a terminal's process starts with.
    script = (
        "import os, signal, sys\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "sys.argv[0] = os.path.join(os.path.dirname(sys.executable), 'codemod')\n"
        "import jax_codemod.cli\n"
        "os.kill(os.getpid(), signal.SIGINT)\n"
        "import jax_codemod.cli.main\n"
        "print('not interrupted')\n"
    )
    process = subprocess.run([sys.executable, "-c", script], capture_output=True, check=False, timeout=60)
    assert (process.returncode, process.stderr, process.stdout) == (130, b"codemod: interrupted\n", b"")


def test_ctrl_c_in_main_is_exit_130_not_a_usage_error(monkeypatch, capsys):
    from jax_codemod.cli import main as main_module

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(main_module, "check_files", interrupt)
    assert main_module.main(["run", "--no-cache", str(REPO / "examples")]) == 130
    assert capsys.readouterr().err == "codemod: interrupted\n"


# The example workflows are safe for forks -------------------------------------------------------

WORKFLOWS = sorted((REPO / "examples" / "ci").glob("*.yml"))
UNTRUSTED = re.compile(r"\$\{\{\s*github\.(event|head_ref)")


def _workflow(path: Path) -> dict:
    import yaml

    return yaml.safe_load(path.read_text())


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda path: path.name)
def test_no_job_that_runs_codemod_holds_a_writable_token(path):
    workflow = _workflow(path)
    assert workflow["permissions"] == {"contents": "read"}
    for name, job in workflow["jobs"].items():
        permissions = job.get("permissions", workflow["permissions"])
        scripts = "\n".join(step.get("run", "") for step in job["steps"])
        checkouts = [step for step in job["steps"] if str(step.get("uses", "")).startswith("actions/checkout")]
        if "codemod run" in scripts:
            assert permissions.get("contents") == "read", name
            assert all(step["with"]["persist-credentials"] is False for step in checkouts), name
        # security-events: write only uploads codemod's own SARIF (and is read-only for forks).
        if any(value == "write" for key, value in permissions.items() if key != "security-events"):
            assert "codemod run" not in scripts and "pip install" not in scripts, name


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda path: path.name)
def test_no_untrusted_value_is_expanded_inside_a_script(path):
    for job in _workflow(path)["jobs"].values():
        for step in job["steps"]:
            assert not UNTRUSTED.search(step.get("run", "")), step.get("name")


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda path: path.name)
def test_the_cache_is_kept_outside_the_checkout(path):
    for job in _workflow(path)["jobs"].values():
        for step in job["steps"]:
            if str(step.get("uses", "")).startswith("actions/cache"):
                assert ".codemod_cache" not in step["with"]["path"]
                assert "codemod-cache" in job["env"]["CODEMOD_CACHE_DIR"]


def test_the_job_summary_fence_outlasts_any_backtick_run_in_the_patch(tmp_path):
    workflow = _workflow(REPO / "examples" / "ci" / "codemod-autofix.yml")
    (step,) = [s for j in workflow["jobs"].values() for s in j["steps"] if "GITHUB_STEP_SUMMARY" in s.get("run", "")]
    patch = tmp_path / "codemod.patch"
    patch.write_bytes(
        b"--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-s = '''\n+```\n+`````\n+# Injected heading\n+<img src=x>\n"
        b"+\xff not utf-8\n"
    )
    summary = tmp_path / "summary.md"
    env = dict(os.environ, PATCH=str(patch), GITHUB_STEP_SUMMARY=str(summary))
    subprocess.run(["bash", "-e", "-c", step["run"]], env=env, check=True, cwd=tmp_path)
    lines = summary.read_text().splitlines()
    opening = next(index for index, line in enumerate(lines) if line.startswith("```"))
    fence = re.match(r"`+", lines[opening]).group()
    assert len(fence) == 6
    inside = lines[opening + 1 :]
    closing = next(index for index, line in enumerate(inside) if line.startswith(fence))
    assert closing == len(inside) - 1  # the first line that closes the fence is its last one
    assert "+# Injected heading" in inside[:closing]
