"""pre-commit's `args:` reach the hook as options, and a staged file is still never an option.

pre-commit runs `entry + args + file names`, and the hook's entry ends with `--pre-commit --`: the
arguments after the `--` before the first one naming an existing file are options, the rest files.
These run the real pre-commit against this working tree as a hook repository (test_ci's fixtures).
"""

from __future__ import annotations

import os

import pytest
from jax_codemod.cli.main import _after_double_dash
from test_bulk import git, make_repo
from test_ci import hook_repo, pre_commit  # noqa: F401 (hook_repo is a fixture used by name)
from test_cli import BROKEN, FIXED, invoke


def project_with(tmp_path, hook_repo, args: str):  # noqa: F811
    repo, rev, _home = hook_repo
    project = make_repo(tmp_path / "project", {"README.txt": b"hello\n"})
    config = f"repos:\n  - repo: {repo}\n    rev: {rev}\n    hooks:\n      - id: codemod\n        args: {args}\n"
    (project / ".pre-commit-config.yaml").write_text(config)
    git("add", ".pre-commit-config.yaml", cwd=project)
    return project


@pytest.mark.parametrize(("args", "fixed"), [
    ("[--select, JAX005]", True),
    ("[--select, JAX002]", False),           # another rule only: the broken call stays
    ("[--select=JAX005]", True),
    ("[--target-jax-version, '0.6']", False),  # to_dlpack still exists on 0.6: nothing to do
])
def test_args_are_options(tmp_path, hook_repo, args, fixed):  # noqa: F811
    _repo, _rev, home = hook_repo
    project = project_with(tmp_path, hook_repo, args)
    (project / "broken.py").write_bytes(BROKEN)
    git("add", "broken.py", cwd=project)
    code, out = pre_commit(project, home, "run")
    assert (project / "broken.py").read_bytes() == (FIXED if fixed else BROKEN), out
    assert code == (1 if fixed else 0), out
    assert "is not a file" not in out


def test_a_file_named_like_an_option_is_still_a_file_with_args(tmp_path, hook_repo):  # noqa: F811
    """The staged names come after the args, and each names a file that exists: the first ends
    the options, so `--ignore=ALL` committed as a file is checked (and fixed), never obeyed."""
    _repo, _rev, home = hook_repo
    project = project_with(tmp_path, hook_repo, "[--select, JAX005]")
    script = b"#!/usr/bin/env python3\n" + BROKEN
    for name in ("--ignore=ALL", "--select=JAX002"):
        (project / name).write_bytes(script)
        (project / name).chmod(0o755)
    git("add", "--", "--ignore=ALL", "--select=JAX002", cwd=project)
    code, out = pre_commit(project, home, "run")
    assert code == 1, out
    for name in ("--ignore=ALL", "--select=JAX002"):
        assert (project / name).read_bytes() == b"#!/usr/bin/env python3\n" + FIXED, (name, out)


def test_the_split(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_bytes(b"")
    (tmp_path / "--ignore=ALL").write_bytes(b"")
    (tmp_path / "JAX005").write_bytes(b"")
    hook = ["run", "--force-exclude", "--pre-commit", "--"]
    # An option's value is its value even where a file of that name exists.
    assert _after_double_dash([*hook, "--select", "JAX005", "a.py"]) == [
        "run", "--force-exclude", "--pre-commit", "--select", "JAX005", "--", "a.py"]
    # The first existing name ends the options: everything after it is a path.
    assert _after_double_dash([*hook, "--ignore=ALL", "a.py"]) == [*hook, "--ignore=ALL", "a.py"]
    # ... so an option after a file name is a path that does not exist: refused, as without --pre-commit.
    code, _out, err = invoke([*hook, "a.py", "--check"], cwd=tmp_path)
    assert code == 2 and "'--check' is not a file" in err
    assert _after_double_dash([*hook, "-j", "2", "a.py", "--ignore=ALL"])[-4:] == ["2", "--", "a.py", "--ignore=ALL"]
    # Without --pre-commit, `--` keeps its strict meaning (scripts pass "$@" after it).
    code, _out, err = invoke(["run", "--check", "--", "--select", "JAX005", "a.py"], cwd=tmp_path)
    assert code == 2 and "'--select' is not a file" in err
    # An unknown option among the args is click's usage error, with its name.
    code, _out, err = invoke([*hook, "--no-such-option", "a.py"], cwd=tmp_path)
    assert code == 2 and "--no-such-option" in err
    assert os.path.exists(tmp_path / "a.py")
