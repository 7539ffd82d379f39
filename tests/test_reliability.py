"""Nothing lost, whatever the input: bad files, racing edits, symlinks, a killed run.

Every bad file that contains a rule's trigger reaches the parser and must be reported
with its path (and line where known), never a traceback, and stay byte-identical.
The same file without a trigger is never parsed: untouched and not reported.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from jax_codemod.cli.main import EXIT_ATTENTION, EXIT_OK, main
from jax_codemod.engine import runner
from jax_codemod.engine.pipeline import MAX_PARSE_BYTES, Settings
from jax_codemod.rules.removed_dlpack_api import RemovedDlpackApi
from test_cli import BROKEN, FIXED, invoke

REPO = Path(__file__).resolve().parent.parent
TRIGGER = b"\nimport jax.dlpack\ny = jax.dlpack.to_dlpack(x)\n"
PY_VERSION = sys.version_info[:2]


def _parses(source: bytes) -> bool:
    try:
        compile(source, "<test>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


# name -> content without a trigger; TRIGGER is appended for the "with trigger" run.
UNPARSABLE = {
    "syntax_error": b"def f(:\n    pass\n",
    "python2": b"print 'hello'\nexec 'x = 1'\n",
    "nul_byte": b"x = 1\n\x00\n",
    "undecodable_utf8": b"x = \"caf\xe9 without an encoding cookie\"\n",
    "unknown_cookie": b"# -*- coding: no-such-codec -*-\nx = 1\n",
    "bom_and_latin1_cookie": b"\xef\xbb\xbf# -*- coding: latin-1 -*-\nx = 1\n",
    "binary": random.Random(0).randbytes(4096),
    "pep695_generics": b"type Pair[T] = tuple[T, T]\n\ndef first[T](pair: Pair[T]) -> T:\n    return pair[0]\n",
    "pep701_fstring": b'names = ["a"]\nmessage = f"{", ".join(names)}"\n',
    "unterminated_string": b"x = 'abc\n",
    "inconsistent_tabs": b"if True:\n\tx = 1\n        y = 2\n",
}
# Line of the first error where it is knowable: the error is reported there.
ERROR_LINE = {"syntax_error": 1, "python2": 1}


@pytest.mark.parametrize("name", sorted(UNPARSABLE))
def test_unparsable_file_with_trigger_is_reported_and_untouched(tmp_path, name):
    content = UNPARSABLE[name] + TRIGGER
    if _parses(content) or name in NEWER_SYNTAX:
        pytest.skip(f"codemod checks {name} on Python {PY_VERSION}; covered by the newer-syntax test")
    path = tmp_path / f"{name}.py"
    path.write_bytes(content)
    (tmp_path / "ok.py").write_bytes(BROKEN)
    code, out, err = invoke(["run", tmp_path])
    assert code == EXIT_ATTENTION
    assert path.read_bytes() == content
    assert (tmp_path / "ok.py").read_bytes() == FIXED, "one bad file must not stop the run"
    assert "Traceback" not in out + err
    (line,) = [line for line in err.splitlines() if line.startswith("error:")]
    assert f"{name}.py" in line
    assert "cannot parse" in line or "cannot read as Python source" in line
    if name in ERROR_LINE:
        assert f"{name}.py:{ERROR_LINE[name]}:" in line


@pytest.mark.parametrize("name", sorted(UNPARSABLE))
def test_unparsable_file_without_trigger_is_never_parsed(tmp_path, name):
    content = UNPARSABLE[name]
    (tmp_path / f"{name}.py").write_bytes(content)
    code, out, err = invoke(["run", tmp_path])
    assert (code, out) == (EXIT_OK, "")
    assert "error" not in err
    assert (tmp_path / f"{name}.py").read_bytes() == content


# Valid Python of a newer version: checked and fixed on every interpreter (engine/syntax.py).
NEWER_SYNTAX = ("pep695_generics", "pep701_fstring")


@pytest.mark.parametrize("name", NEWER_SYNTAX)
def test_newer_syntax_is_fixed_never_damaged(tmp_path, name):
    """Whatever Python runs codemod, the file is fixed and keeps its syntax; never a crash."""
    content = UNPARSABLE[name] + b"import jax.dlpack\nimport torch\nt = torch.from_dlpack(jax.dlpack.to_dlpack(x))\n"
    path = tmp_path / f"{name}.py"
    path.write_bytes(content)
    code, out, err = invoke(["run", tmp_path])
    assert "Traceback" not in out + err
    after = path.read_bytes()
    import libcst

    assert code == 0, err
    assert after == content.replace(b"jax.dlpack.to_dlpack(x)", b"x")
    libcst.parse_module(after)
    if _parses(content):
        assert _parses(after)


# Files that are valid Python in unusual shapes: fixed, and every other byte kept.
def _latin1() -> tuple[bytes, bytes]:
    head = b"# -*- coding: latin-1 -*-\n# caf\xe9\nimport jax.dlpack\nimport torch\n\n"
    return head + b"t = torch.from_dlpack(jax.dlpack.to_dlpack(x))\n", head + b"t = torch.from_dlpack(x)\n"


UNUSUAL = {
    "utf8_bom": (b"\xef\xbb\xbf" + BROKEN, b"\xef\xbb\xbf" + FIXED),
    "crlf": (BROKEN.replace(b"\n", b"\r\n"), FIXED.replace(b"\n", b"\r\n")),
    "mixed_newlines": (
        b"import jax.dlpack\r\nimport torch\n\r\nt = torch.from_dlpack(jax.dlpack.to_dlpack(x))\r\n",
        b"import jax.dlpack\r\nimport torch\n\r\nt = torch.from_dlpack(x)\r\n",
    ),
    "tabs": (
        b"import jax.dlpack\nimport torch\nif x:\n\tt = torch.from_dlpack(jax.dlpack.to_dlpack(x))\t# keep\n",
        b"import jax.dlpack\nimport torch\nif x:\n\tt = torch.from_dlpack(x)\t# keep\n",
    ),
    "latin1_cookie": _latin1(),
    "no_final_newline": (BROKEN.rstrip(b"\n"), FIXED.rstrip(b"\n")),
    "non_ascii_identifiers": (
        "import jax.dlpack\nimport torch\nδ = torch.from_dlpack(jax.dlpack.to_dlpack(ü))\n".encode(),
        "import jax.dlpack\nimport torch\nδ = torch.from_dlpack(ü)\n".encode(),
    ),
}


@pytest.mark.parametrize("name", sorted(UNUSUAL))
def test_unusual_but_valid_file_is_fixed_byte_exactly(tmp_path, name):
    before, expected = UNUSUAL[name]
    path = tmp_path / f"{name}.py"
    path.write_bytes(before)
    code, _, err = invoke(["run", tmp_path])
    assert code == EXIT_OK, err
    assert path.read_bytes() == expected
    assert invoke(["run", tmp_path])[0] == EXIT_OK
    assert path.read_bytes() == expected


def test_empty_file(tmp_path):
    (tmp_path / "empty.py").write_bytes(b"")
    code, out, err = invoke(["run", tmp_path])
    assert (code, out) == (EXIT_OK, "")
    assert "1 files scanned" in err and (tmp_path / "empty.py").read_bytes() == b""


def _generated(size: int, trigger: bytes) -> bytes:
    line = b"value = compute(1, 'text') + other[2]\n"
    return line * (size // len(line)) + trigger


def test_huge_generated_file_with_trigger_is_reported_not_parsed(tmp_path):
    content = _generated(20 * 2**20, TRIGGER)
    path = tmp_path / "generated.py"
    path.write_bytes(content)
    started = time.monotonic()
    code, _, err = invoke(["run", tmp_path])
    assert time.monotonic() - started < 10, "a 20 MB file must not be parsed"
    assert code == EXIT_ATTENTION
    assert f"generated.py: not checked: 20.0 MiB is over the {MAX_PARSE_BYTES // 2**20} MiB limit" in err
    assert path.read_bytes() == content


def test_huge_generated_file_without_trigger_is_skipped_quietly(tmp_path):
    content = _generated(20 * 2**20, b"")
    (tmp_path / "generated.py").write_bytes(content)
    code, _, err = invoke(["run", tmp_path])
    assert code == EXIT_OK and "error" not in err


def test_unreadable_file_is_reported(tmp_path, monkeypatch):
    # Root reads any file whatever its mode, so the denial is simulated as well as real.
    path = tmp_path / "secret.py"
    path.write_bytes(BROKEN)
    path.chmod(0)
    if os.access(path, os.R_OK):
        real_open = open

        def denying_open(file, *args, **kwargs):
            if os.fspath(file) == str(path):
                raise PermissionError(13, "Permission denied", str(file))
            return real_open(file, *args, **kwargs)

        def denying_os_open(file, *args, **kwargs):
            if os.fspath(file) == str(path):
                raise PermissionError(13, "Permission denied", str(file))
            return os.open(file, *args, **kwargs)

        monkeypatch.setattr(runner, "open", denying_open, raising=False)
        monkeypatch.setattr(runner, "_open_fd", denying_os_open)
    code, _, err = invoke(["run", tmp_path])
    path.chmod(0o644)
    assert code == EXIT_ATTENTION
    assert "secret.py: cannot read: Permission denied" in err
    assert path.read_bytes() == BROKEN


def test_read_only_file_is_not_written(tmp_path):
    path = tmp_path / "frozen.py"
    path.write_bytes(BROKEN)
    path.chmod(0o444)
    code, _, err = invoke(["run", tmp_path])
    assert code == EXIT_ATTENTION
    assert "frozen.py: not written: the file is read-only" in err
    assert path.read_bytes() == BROKEN
    assert oct(path.stat().st_mode & 0o777) == oct(0o444)


def test_mode_is_kept_on_rewrite(tmp_path):
    path = tmp_path / "script.py"
    path.write_bytes(BROKEN)
    path.chmod(0o751)
    assert invoke(["run", tmp_path])[0] == EXIT_OK
    assert path.read_bytes() == FIXED and path.stat().st_mode & 0o777 == 0o751


def test_read_only_directory_is_reported(tmp_path):
    directory = tmp_path / "locked"
    directory.mkdir()
    path = directory / "a.py"
    path.write_bytes(BROKEN)
    directory.chmod(0o555)
    try:
        code, _, err = invoke(["run", tmp_path])
        if os.geteuid() != 0:  # root may create files in a 0555 directory
            assert code == EXIT_ATTENTION and "a.py: not written: cannot create a temporary file" in err
            assert path.read_bytes() == BROKEN
        assert path.read_bytes() in (BROKEN, FIXED)
        assert [p.name for p in directory.iterdir()] == ["a.py"]
    finally:
        directory.chmod(0o755)


def _edit_while_running(monkeypatch, edit):
    """Run ``edit(path)`` for each file while the run checks it, after it has been read.

    Patched at the rule so that every route to it (a pool, a result cache) sees the edit.
    """
    check = RemovedDlpackApi.check

    def racing(self, ctx):
        edit(Path(ctx.path))
        return check(self, ctx)

    monkeypatch.setattr(RemovedDlpackApi, "check", racing)


def test_file_changed_during_run_is_not_overwritten(tmp_path, monkeypatch):
    path = tmp_path / "edited.py"
    path.write_bytes(BROKEN)
    edited = BROKEN + b"# saved by an editor meanwhile\n"
    _edit_while_running(monkeypatch, lambda p: p.write_bytes(edited))
    code, _, err = invoke(["run", tmp_path])
    assert code == EXIT_ATTENTION
    assert "edited.py: not written: the file changed on disk while the run was in progress" in err
    assert path.read_bytes() == edited


def test_file_deleted_during_run_is_not_resurrected(tmp_path, monkeypatch):
    path = tmp_path / "gone.py"
    path.write_bytes(BROKEN)
    _edit_while_running(monkeypatch, lambda p: p.unlink(missing_ok=True))
    code, _, err = invoke(["run", tmp_path])
    assert code == EXIT_ATTENTION
    assert "gone.py: not written: cannot re-read: No such file or directory" in err
    assert list(tmp_path.iterdir()) == []


def test_file_changed_between_comparison_and_rename_is_not_overwritten(tmp_path, monkeypatch):
    """The last look happens after the temporary is written, just before the rename."""
    path = tmp_path / "late.py"
    path.write_bytes(BROKEN)
    late = BROKEN + b"# late edit\n"
    fsync = os.fsync

    def fsync_then_edit(fd):
        fsync(fd)
        path.write_bytes(late)

    monkeypatch.setattr(runner.os, "fsync", fsync_then_edit)
    with pytest.raises(runner.WriteError, match="changed on disk"):
        runner.write_atomic(str(path), BROKEN, FIXED)
    assert path.read_bytes() == late
    assert [p.name for p in tmp_path.iterdir()] == ["late.py"]


def test_interrupted_write_leaves_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "a.py"
    path.write_bytes(BROKEN)

    def interrupt(fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(runner.os, "fsync", interrupt)
    with pytest.raises(KeyboardInterrupt):
        runner.write_atomic(str(path), BROKEN, FIXED)
    assert [p.name for p in tmp_path.iterdir()] == ["a.py"]
    assert path.read_bytes() == BROKEN


def test_symlinks_loops_and_links_out_of_the_root(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "theirs.py").write_bytes(BROKEN)
    (root / "mine.py").write_bytes(BROKEN)
    (root / "loop").symlink_to(root, target_is_directory=True)  # a directory loop
    (root / "self.py").symlink_to(root / "self.py")  # a symlink to itself
    (root / "dangling.py").symlink_to(root / "missing.py")
    (root / "out").symlink_to(outside, target_is_directory=True)
    (root / "out_file.py").symlink_to(outside / "theirs.py")
    (root / "alias.py").symlink_to(root / "mine.py")  # the same file twice
    code, _, err = invoke(["run", root])
    assert code == EXIT_OK, err
    assert "1 files scanned, 1 changed" in err
    assert (root / "mine.py").read_bytes() == FIXED
    assert (root / "alias.py").is_symlink()
    assert (outside / "theirs.py").read_bytes() == BROKEN


def test_explicit_symlink_rewrites_its_target_and_stays_a_link(tmp_path):
    (tmp_path / "real.py").write_bytes(BROKEN)
    (tmp_path / "link.py").symlink_to(tmp_path / "real.py")
    assert invoke(["run", tmp_path / "link.py"])[0] == EXIT_OK
    assert (tmp_path / "link.py").is_symlink()
    assert (tmp_path / "real.py").read_bytes() == FIXED


def test_paths_with_spaces_and_non_ascii_names(tmp_path):
    directory = tmp_path / "my project" / "données é"
    directory.mkdir(parents=True)
    path = directory / "ünïcode name.py"
    path.write_bytes(BROKEN)
    code, out, _ = invoke(["run", "--dry-run", "."], cwd=tmp_path)
    assert code == EXIT_ATTENTION
    # As `git diff` writes it: non-ASCII bytes in octal, a TAB after a name with a space.
    assert '--- "a/my project/donn\\303\\251es \\303\\251/\\303\\274n\\303\\257code name.py"\t\n' in out
    assert invoke(["run", tmp_path])[0] == EXIT_OK
    assert path.read_bytes() == FIXED


def test_special_files_named_py_are_reported_not_read(tmp_path):
    os.mkfifo(tmp_path / "pipe.py")
    (tmp_path / "folder.py").mkdir()
    code, _, err = invoke(["run", tmp_path])
    assert code == EXIT_OK, "a directory walk skips them"
    code, _, err = invoke(["run", tmp_path / "pipe.py"])
    assert code == EXIT_ATTENTION, "open() would have blocked on the FIFO"
    assert "pipe.py: cannot read: not a regular file" in err


def test_a_crashing_rule_costs_one_file_not_the_run(tmp_path, monkeypatch):
    def broken_check(self, ctx):
        if "bad" in ctx.path:
            raise AttributeError("rule bug")
        return original(self, ctx)

    original = RemovedDlpackApi.check
    monkeypatch.setattr(RemovedDlpackApi, "check", broken_check)
    (tmp_path / "bad.py").write_bytes(BROKEN)
    (tmp_path / "good.py").write_bytes(BROKEN)
    code, _, err = invoke(["run", tmp_path])
    assert code == EXIT_ATTENTION
    assert "bad.py: internal error while checking: AttributeError: rule bug" in err
    assert (tmp_path / "bad.py").read_bytes() == BROKEN
    assert (tmp_path / "good.py").read_bytes() == FIXED


def test_pool_results_match_serial_results(tmp_path, monkeypatch):
    """The prefilter runs before the pool; results keep the order of the paths given."""
    monkeypatch.setattr(runner, "PARALLEL_MIN_BYTES", 0)
    paths = []
    for index in range(40):
        path = tmp_path / f"f{index:02}.py"
        path.write_bytes(BROKEN if index % 3 == 0 else b"def (:\n" + TRIGGER if index % 3 == 1 else b"x = 1\n")
        paths.append(str(path))
    settings = Settings(rules=(RemovedDlpackApi(),))
    summary = [(r.path, r.changed, str(r.error)) for r in runner.check_files(paths, settings, jobs=1)]
    assert summary == [(r.path, r.changed, str(r.error)) for r in runner.check_files(paths, settings, jobs=2)]
    assert [path for path, *_ in summary] == paths


# SIGKILL in the middle of writing ------------------------------------------------------


def test_sigkill_while_writing_leaves_every_file_old_or_new(tmp_path):
    """Kill -9 at random moments of the write phase: every file is whole, old or new.

    A killed run may leave one hidden ``.name.*.codemod-tmp`` file (a rename can't be
    made atomic with its temporary's removal). It is not user code, and discovery never
    picks it up: the next run finishes the migration and ignores it.
    """
    rng = random.Random(1234)
    count = 300
    interrupted = []
    for attempt in range(3):
        tree = tmp_path / f"run{attempt}"
        tree.mkdir()
        for index in range(count):
            (tree / f"m{index:03}.py").write_bytes(BROKEN)
        process = subprocess.Popen(
            [sys.executable, "-m", "jax_codemod.cli", "run", "--no-progress", "-j", "1", str(tree)],
            cwd=REPO,
            env=dict(os.environ, PYTHONPATH=str(REPO)),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        # Writing 300 files takes a few hundred ms (an fsync each): kills land mid-write.
        _kill_during_writes(process, tree, rng.uniform(0, 0.01))
        contents = [path.read_bytes() for path in sorted(tree.glob("*.py"))]
        assert len(contents) == count
        assert set(contents) <= {BROKEN, FIXED}
        leftovers = [p.name for p in tree.iterdir() if not p.name.endswith(".py")]
        assert len(leftovers) <= 1 and all(name.endswith(".codemod-tmp") for name in leftovers)
        assert all(name.startswith(".m") for name in leftovers)
        interrupted.append(len(set(contents)) == 2 or bool(leftovers))
        code, _, err = invoke(["run", tree])
        assert code == EXIT_OK, err
        assert f"{count} files scanned" in err
        assert {path.read_bytes() for path in tree.glob("*.py")} == {FIXED}
    assert any(interrupted), "no kill landed in the middle of the writes: the test proved nothing"


def _kill_during_writes(process: subprocess.Popen, tree: Path, delay: float) -> None:
    """SIGKILL ``process`` ``delay`` seconds after its first rename into ``tree``."""
    before = tree.stat().st_mtime_ns
    deadline = time.monotonic() + 120
    while tree.stat().st_mtime_ns == before and process.poll() is None:
        if time.monotonic() > deadline:
            process.kill()
            pytest.fail("the run never started writing")
        time.sleep(0.0005)
    time.sleep(delay)
    process.send_signal(signal.SIGKILL)
    process.wait()


@pytest.mark.skipif(multiprocessing.get_start_method() != "fork", reason="workers must inherit the patch")
def test_a_dying_worker_costs_its_files_not_the_run(tmp_path, monkeypatch):
    """A worker killed by the OS (OOM, a native crash) leaves its files reported as unchecked."""
    monkeypatch.setattr(runner, "PARALLEL_MIN_BYTES", 0)
    original = RemovedDlpackApi.check

    def dying_check(self, ctx):
        if ctx.path.endswith("die.py"):
            os._exit(1)
        return original(self, ctx)

    monkeypatch.setattr(RemovedDlpackApi, "check", dying_check)  # inherited by forked workers
    paths = []
    for name in ("a.py", "die.py", "b.py", "c.py"):
        (tmp_path / name).write_bytes(BROKEN)
        paths.append(str(tmp_path / name))
    results = runner.check_files(paths, Settings(rules=(RemovedDlpackApi(),)), jobs=2)
    assert [r.path for r in results] == paths
    died = {r.path for r in results if r.error and "a worker process died" in r.error.message}
    assert str(tmp_path / "die.py") in died
    assert all(r.changed for r in results if r.path not in died)


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file away")
def test_owner_and_group_are_kept_when_root_rewrites(tmp_path):
    path = tmp_path / "theirs.py"
    path.write_bytes(BROKEN)
    os.chown(path, 65534, 65534)
    assert invoke(["run", tmp_path])[0] == EXIT_OK
    assert path.read_bytes() == FIXED
    assert (path.stat().st_uid, path.stat().st_gid) == (65534, 65534)


@pytest.mark.parametrize("name", ["syntax_error", "nul_byte", "binary", "unknown_cookie"])
def test_stdin_passes_bad_input_through_unchanged(name):
    content = UNPARSABLE[name] + TRIGGER
    with CliRunner().isolation(input=content) as (out, err, _mixed):
        code = main(["run", "-"])
    assert code == EXIT_ATTENTION
    assert b"<stdin>" in err.getvalue() and b"Traceback" not in err.getvalue()
    assert out.getvalue() == content


@pytest.mark.parametrize("depth", [500, 20000])
def test_deeply_nested_code_is_reported_not_a_crash(tmp_path, depth):
    """ast may accept what libcst's recursive visitors cannot; either way one error, no damage."""
    content = b"import jax.dlpack\nimport torch\nx = " + b"-" * depth + b"y\n" + BROKEN
    path = tmp_path / "deep.py"
    path.write_bytes(content)
    code, out, err = invoke(["run", tmp_path])
    assert code == EXIT_ATTENTION
    assert "Traceback" not in out + err
    assert "deep.py:3: not checked: nesting too deep" in err or "deep.py: fix not applied" in err
    assert path.read_bytes() == content
