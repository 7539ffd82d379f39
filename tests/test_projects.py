"""Multi-module projects: a value that crosses a module boundary (issue 34).

Each folder under tests/projects/ is a small project run as ``python main.py`` from its folder
(so its packages import as they do for a user). Its ``case.toml`` names the rules, the error the
old code raises (``expect``, matched as in test_execution) and what it needs. For each project:

- the old code, executed with the real libraries, raises that error (where ``fails_on`` holds);
- ``codemod run --dry-run`` over the project reports a finding;
- ``codemod run`` rewrites it; the diff of every changed file is the snapshot, and the new
  code runs and passes the project's own assertions on the installed JAX. A project whose
  findings have no safe automatic fix says ``fix = false`` and lists them (``findings``, each
  ``path:line:code``): exactly those are reported, and a run (safe fixes) changes no byte.

A project the analysis does not yet handle says why in ``missed``: its tests are strict xfails,
so the day the analysis reaches it the suite says so, and the marker must go.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib
from cases import _VERSION_REQUIREMENT, _unmet
from jax_codemod.cli.main import main
from jax_codemod.engine.results import unified_diff
from test_execution import accepted_errors, backend, execution_env

PROJECTS = Path(__file__).parent / "projects"


def _projects() -> list[Path]:
    return sorted(path for path in PROJECTS.iterdir() if (path / "case.toml").is_file())


def _case(project: Path) -> dict:
    return tomllib.loads((project / "case.toml").read_text(encoding="utf-8"))


def _skip_reason(case: dict) -> str | None:
    for requirement in case.get("requires", []):
        if requirement == "multi-device":
            platform, count = backend(False)
            if count < 2:
                return f"needs several devices; the {platform} backend has {count}"
        elif requirement == "torch":
            import importlib.util

            if importlib.util.find_spec("torch") is None:
                return "needs torch, which is not installed"
    return None


def _fails_here(case: dict) -> bool:
    spec = case.get("fails_on")
    if not spec:
        return True
    items = [_VERSION_REQUIREMENT.match(item.strip()) for item in spec.split(",")]
    return _unmet([match.groups() for match in items if match]) is None


def _params(*, missed_xfails: bool):
    for project in _projects():
        case = _case(project)
        marks = []
        if missed_xfails and case.get("missed"):
            marks.append(pytest.mark.xfail(reason=case["missed"], strict=True))
        yield pytest.param(project, id=project.name, marks=marks)


def _copy(project: Path, tmp_path: Path) -> Path:
    target = tmp_path / project.name
    shutil.copytree(project, target, ignore=shutil.ignore_patterns("case.toml", "__pycache__"))
    return target


def _run_program(folder: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "main.py"], cwd=folder, capture_output=True, text=True, timeout=600,
        env=execution_env(False), check=False,
    )


def _sources(folder: Path) -> dict[str, bytes]:
    return {path.relative_to(folder).as_posix(): path.read_bytes() for path in sorted(folder.rglob("*.py"))}


_RAISED = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception))(?::|$)", re.MULTILINE)


def _raised(done: subprocess.CompletedProcess, case: dict) -> bool:
    """The program died of the documented error (the traceback's last exception line: JAX may
    print a note after it)."""
    raised = _RAISED.findall(done.stderr)
    return done.returncode != 0 and bool(raised) and any(
        raised[-1].split(".")[-1] == error_type and fragment in done.stderr
        for error_type, fragment in accepted_errors(case["expect"], case["fragment"])
    )


@pytest.mark.parametrize("project", list(_params(missed_xfails=False)))
def test_old_code_raises_the_documented_error(project: Path, tmp_path: Path):
    case = _case(project)
    reason = _skip_reason(case)
    if reason:
        pytest.skip(reason)
    done = _run_program(_copy(project, tmp_path))
    if _fails_here(case):
        assert _raised(done, case), done.stderr[-3000:]
    else:
        assert done.returncode == 0, done.stderr[-3000:]


def _reported(folder: Path, select: str) -> set[str]:
    import json

    from click.testing import CliRunner

    with CliRunner().isolation() as (out, _err, _):
        main(["run", "--dry-run", "--no-cache", "--format", "json", "--select", select, str(folder)])
        document = json.loads(out.getvalue().decode())
    return {
        f"{Path(f['path']).resolve().relative_to(folder.resolve()).as_posix()}:{f['line']}:{f['code']}"
        for f in document["findings"]
    }


@pytest.mark.parametrize("project", [p for p in _params(missed_xfails=True) if _case(p.values[0]).get("fix", True) is False])
def test_the_project_is_reported_where_no_fix_is_safe(project: Path, tmp_path: Path):
    case = _case(project)
    folder = _copy(project, tmp_path)
    select = ",".join(case["rules"])
    before = _sources(folder)
    assert _reported(folder, select) == set(case["findings"])
    assert main(["run", "--check", "--no-cache", "--select", select, str(folder)]) == 1
    main(["run", "--no-cache", "--select", select, str(folder)])
    assert _sources(folder) == before


@pytest.mark.parametrize("project", [p for p in _params(missed_xfails=True) if _case(p.values[0]).get("fix", True)])
def test_the_project_is_reported_fixed_and_runs(project: Path, tmp_path: Path, diff_snapshot):
    case = _case(project)
    folder = _copy(project, tmp_path)
    select = ",".join(case["rules"])
    before = _sources(folder)
    assert main(["run", "--check", "--no-cache", "--select", select, str(folder)]) == 1
    main(["run", "--no-cache", "--unsafe-fixes", "--select", select, str(folder)])
    after = _sources(folder)
    changed = sorted(path for path in after if after[path] != before.get(path))
    assert changed, "no file was rewritten"
    diff = "".join(
        unified_diff(before[path], after[path], path) for path in changed
    )
    assert diff == diff_snapshot
    # A second run finds nothing left to do.
    assert main(["run", "--check", "--no-cache", "--select", select, str(folder)]) == 0
    reason = _skip_reason(case)
    if reason:
        pytest.skip(reason)
    done = _run_program(folder)
    assert done.returncode == 0, done.stderr[-3000:]
