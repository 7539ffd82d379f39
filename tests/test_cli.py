"""The command line: exit codes, output formats, stdin, configuration, bad paths."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cases import all_cases
from click.testing import CliRunner
from jax_codemod.cli.main import EXIT_ATTENTION, EXIT_OK, EXIT_USAGE, main

REPO = Path(__file__).resolve().parent.parent
BROKEN = b"import jax.dlpack\nimport torch\n\nt = torch.from_dlpack(jax.dlpack.to_dlpack(x))\n"
FIXED = b"import jax.dlpack\nimport torch\n\nt = torch.from_dlpack(x)\n"
CLEAN = b"import torch\n\nt = torch.from_dlpack(x)\n"
REPORT_ONLY = b"import jax.dlpack\n\nexporters = [jax.dlpack.to_dlpack]\n"


def invoke(args, stdin: bytes | None = None, cwd: Path | None = None):
    """Run ``main(args)`` with captured streams: (exit code, stdout, stderr)."""
    runner = CliRunner()
    previous = os.getcwd()
    if cwd:
        os.chdir(cwd)
    try:
        with runner.isolation(input=stdin) as (out, err, _mixed):
            code = main([str(a) for a in args])
            return code, out.getvalue().decode(), err.getvalue().decode()
    finally:
        os.chdir(previous)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "broken.py").write_bytes(BROKEN)
    (tmp_path / "clean.py").write_bytes(CLEAN)
    return tmp_path


def test_fix_rewrites_in_place_and_exits_zero(tree):
    code, _, err = invoke(["run", tree])
    assert code == EXIT_OK, err
    assert (tree / "broken.py").read_bytes() == FIXED
    assert (tree / "clean.py").read_bytes() == CLEAN
    assert "1 changed" in err


def test_second_run_is_a_no_op(tree):
    invoke(["run", tree])
    first = (tree / "broken.py").stat().st_mtime_ns
    code, _, err = invoke(["run", tree])
    assert code == EXIT_OK
    assert "0 changed" in err
    assert (tree / "broken.py").stat().st_mtime_ns == first


def test_dry_run_prints_patch_and_writes_nothing(tree):
    code, out, _ = invoke(["run", "--dry-run", "broken.py"], cwd=tree)
    assert code == EXIT_ATTENTION
    assert out.startswith("--- a/broken.py\n+++ b/broken.py\n")
    assert "+t = torch.from_dlpack(x)\n" in out
    assert (tree / "broken.py").read_bytes() == BROKEN


def test_check_reports_and_writes_nothing(tree):
    code, out, _ = invoke(["run", "--check", tree])
    assert code == EXIT_ATTENTION
    assert "broken.py:4:23: JAX005" in out and "[*]" in out
    assert (tree / "broken.py").read_bytes() == BROKEN


def test_check_on_clean_tree_exits_zero(tmp_path):
    (tmp_path / "clean.py").write_bytes(CLEAN)
    code, out, _ = invoke(["run", "--check", tmp_path])
    assert (code, out) == (EXIT_OK, "")


def test_unfixed_findings_exit_one(tmp_path):
    (tmp_path / "ref.py").write_bytes(REPORT_ONLY)
    code, out, _ = invoke(["run", tmp_path])
    assert code == EXIT_ATTENTION
    assert "JAX005" in out and "[*]" not in out
    assert (tmp_path / "ref.py").read_bytes() == REPORT_ONLY


def test_json_schema(tree):
    (tree / "bad.py").write_bytes(b"jax.dlpack.to_dlpack(\n")
    code, out, _ = invoke(["run", "--dry-run", "--format", "json", tree])
    assert code == EXIT_ATTENTION
    document = json.loads(out)
    assert set(document) == {"version", "mode", "findings", "errors", "summary", "diffs"}
    (finding,) = document["findings"]
    assert set(finding) == {"code", "name", "path", "line", "column", "message", "fix", "applied"}
    assert (finding["code"], finding["fix"], finding["applied"], finding["line"]) == ("JAX005", "safe", True, 4)
    (error,) = document["errors"]
    assert error["path"].endswith("bad.py") and error["line"] == 1 and "cannot parse" in error["message"]
    summary = document["summary"]
    assert (summary["files_scanned"], summary["files_changed"], summary["files_failed"]) == (3, 1, 1)
    assert summary["by_rule"] == {"JAX005": {"found": 1, "fixed": 1}}
    (diff,) = document["diffs"]
    assert diff["path"].endswith("broken.py") and "+t = torch.from_dlpack(x)" in diff["diff"]


def test_json_report_only_finding_has_fix_none(tmp_path):
    (tmp_path / "ref.py").write_bytes(REPORT_ONLY)
    _, out, _ = invoke(["run", "--format", "json", tmp_path])
    (finding,) = json.loads(out)["findings"]
    assert (finding["fix"], finding["applied"]) == ("none", False)


def test_stdin_to_stdout():
    code, out, _ = invoke(["run", "-"], stdin=BROKEN)
    assert code == EXIT_OK
    assert out.encode() == FIXED


def test_stdin_dry_run_uses_stdin_filename():
    code, out, _ = invoke(["run", "--dry-run", "--stdin-filename", "pkg/mod.py", "-"], stdin=BROKEN)
    assert code == EXIT_ATTENTION
    assert out.startswith("--- a/pkg/mod.py\n")


def test_missing_path_is_reported_not_fatal(tree):
    code, _, err = invoke(["run", tree / "nope.py", tree])
    assert code == EXIT_ATTENTION
    assert "nope.py: no such file or directory" in err
    assert (tree / "broken.py").read_bytes() == FIXED


def test_unparsable_file_is_reported_with_line_and_run_continues(tree):
    (tree / "bad.py").write_bytes(b"x = 1\nimport jax.dlpack\ndef (:\n    jax.dlpack.to_dlpack(x)\n")
    code, _, err = invoke(["run", tree])
    assert code == EXIT_ATTENTION
    assert "bad.py:3:5: cannot parse: invalid syntax\n  3 | def (:\n    |     ^\n" in err
    assert (tree / "broken.py").read_bytes() == FIXED


def test_empty_directory_is_not_an_error(tmp_path):
    code, _, err = invoke(["run", "--check", tmp_path])
    assert code == EXIT_OK
    assert "0 files scanned" in err


@pytest.mark.parametrize(
    "args",
    [
        ["run", "--select", "NOPE", "."],
        ["run", "--dry-run", "--check", "."],
        ["run", "--format", "xml", "."],
        ["run", "-", "other.py"],
        ["explain", "JAX999"],
        ["frobnicate"],
    ],
)
def test_usage_errors_exit_two(args, tmp_path):
    code, _, err = invoke(args, cwd=tmp_path)
    assert code == EXIT_USAGE
    assert err.strip()


def test_config_select_and_exclude(tree):
    (tree / "pyproject.toml").write_text('[tool.codemod]\nexclude = ["broken.py"]\n')
    code, _, err = invoke(["run", "--check", tree])
    assert code == EXIT_OK
    assert "2 files scanned" not in err and "1 files scanned" in err


def test_config_unknown_key_is_a_usage_error(tree):
    (tree / "pyproject.toml").write_text("[tool.codemod]\nselekt = ['JAX005']\n")
    code, _, err = invoke(["run", tree])
    assert code == EXIT_USAGE
    assert "pyproject.toml" in err and "selekt" in err
    assert (tree / "broken.py").read_bytes() == BROKEN


def test_ignore_on_command_line_overrides_config(tree):
    (tree / "pyproject.toml").write_text("[tool.codemod]\nselect = ['JAX005']\n")
    code, _, _ = invoke(["run", "--check", "--ignore", "JAX005", tree])
    assert code == EXIT_OK


def test_suppression_comment(tmp_path):
    source = b"import jax.dlpack\nc = jax.dlpack.to_dlpack(x)  # codemod: ignore[JAX005]\n"
    (tmp_path / "s.py").write_bytes(source)
    code, out, _ = invoke(["run", tmp_path])
    assert (code, out) == (EXIT_OK, "")
    assert (tmp_path / "s.py").read_bytes() == source


def test_list_and_explain():
    import jax_codemod

    code, out, _ = invoke(["list"])
    assert code == EXIT_OK
    for rule in jax_codemod.RULES:
        assert rule.CODE in out and rule.NAME in out
    code, out, _ = invoke(["explain", "jax005"])
    assert code == EXIT_OK
    assert "## Why is this bad?" in out and "removed-dlpack-api" in out


def test_help_documents_exit_codes():
    code, out, _ = invoke(["run", "--help"])
    assert code == EXIT_OK
    assert "Exit codes" in out and "usage or configuration error" in out


def test_real_subprocess(tree):
    done = subprocess.run(
        [sys.executable, "-m", "jax_codemod.cli", "run", "--check", "--format", "json", str(tree)],
        capture_output=True,
        cwd=REPO,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
        check=False,
    )
    assert done.returncode == EXIT_ATTENTION, done.stderr
    assert json.loads(done.stdout)["summary"]["findings"] == 1
    assert b"files scanned" in done.stderr


@pytest.mark.parametrize("case", [c for c in all_cases() if c.kind == "report"], ids=lambda c: c.id)
def test_report_only_cases_appear_in_json_with_fix_none(case, tmp_path):
    target = tmp_path / case.path.name
    target.write_bytes(case.source)
    options = [f"--config={tmp_path / 'pyproject.toml'}"] if case.options else []
    if case.options:
        table = "".join(f'{key} = "{value}"\n' for key, value in case.options.items())
        (tmp_path / "pyproject.toml").write_text(f"[tool.codemod]\n{table}")
    code, out, _ = invoke(["run", "--format", "json", "--no-cache", "--select", case.rule.CODE, *options, target])
    findings = [f for f in json.loads(out)["findings"] if f["code"] == case.rule.CODE]
    assert code == EXIT_ATTENTION
    assert findings and all((f["fix"], f["applied"]) == ("none", False) for f in findings)
    assert target.read_bytes() == case.source
