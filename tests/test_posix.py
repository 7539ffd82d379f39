"""Supported platforms: Linux and macOS. Where this Python's ``os`` lacks ``dir_fd`` or
``O_NOFOLLOW`` (Windows), a run that could write stops at once with one line, not a traceback at
its first write; stdin to stdout still works. The missing support is simulated here."""

from __future__ import annotations

import os
import sys

import pytest
from jax_codemod.engine import posix
from jax_codemod.engine.runner import WriteError, write_atomic
from test_cli import BROKEN, FIXED, invoke


@pytest.fixture
def no_dir_fd(monkeypatch):
    monkeypatch.setattr(os, "supports_dir_fd", set())
    monkeypatch.delattr(os, "O_NOFOLLOW", raising=False)


def test_this_platform_has_what_the_writes_need():
    # CI runs on Linux (and the docs promise macOS): nothing missing, nothing refused.
    assert posix.missing() == []
    posix.require()


def test_a_run_over_paths_stops_with_one_line(tmp_path, no_dir_fd):
    (tmp_path / "a.py").write_bytes(BROKEN)
    for args in (["run", "."], ["run", "--check", "."], ["run", "--add-noqa", "."]):
        code, out, err = invoke(args, cwd=tmp_path)
        assert code == 2, (args, out, err)
        assert "codemod writes only on POSIX systems (Linux, macOS)" in err and f"({sys.platform})" in err
        assert "open(dir_fd=...)" in err and "O_NOFOLLOW" in err and "WSL" in err
        assert "Traceback" not in out + err
    assert (tmp_path / "a.py").read_bytes() == BROKEN


def test_stdin_to_stdout_still_works(tmp_path, no_dir_fd):
    code, out, err = invoke(["run", "-"], stdin=BROKEN, cwd=tmp_path)
    assert code == 0, err
    assert out.encode() == FIXED


def test_the_engines_write_refuses_too(tmp_path, no_dir_fd):
    """An embedder (all-repos, the API) gets the file's WriteError, with the reason."""
    target = tmp_path / "a.py"
    target.write_bytes(BROKEN)
    with pytest.raises(WriteError, match="only on POSIX systems"):
        write_atomic(str(target), BROKEN, FIXED)
    assert target.read_bytes() == BROKEN


def test_each_missing_call_is_named(monkeypatch):
    monkeypatch.setattr(os, "supports_dir_fd", {os.open, os.stat, os.unlink, os.mkdir, os.access})
    assert posix.missing() == ["rename(dir_fd=...)"]
