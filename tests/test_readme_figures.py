"""The README's CI figures come from recorded runs (scripts/readme_figures.py), not from typing."""

from __future__ import annotations

import importlib.util
import json

import pytest
from test_cli import REPO

spec = importlib.util.spec_from_file_location("readme_figures", REPO / "scripts" / "readme_figures.py")
figures = importlib.util.module_from_spec(spec)
spec.loader.exec_module(figures)


@pytest.mark.parametrize(("log", "summary"), [
    ("....\n4516 passed, 9 skipped, 1 xfailed in 812.34s (0:13:32)\n", "4516 passed, 9 skipped, 1 xfailed"),
    ("===== 3 failed, 10 passed, 2 warnings in 1.20s =====\n", "3 failed, 10 passed"),
    ("pip output\n1 passed in 0.01s\nmore\n2 passed, 1 skipped in 3.00s\n", "2 passed, 1 skipped"),
    ("no summary here\n", None),
])
def test_summary_is_pytests_own_last_line(log, summary):
    assert figures.summary_of(log) == summary


def test_update_writes_each_recorded_environment_into_its_row():
    readme = ("| environment | Python | tests | result (2026-12-01) |\n| --- | --- | --- | --- |\n"
              "| readme (the README command) | 3.11 | whole suite | 521 passed, 9 skipped |\n"
              "| jax0430 | 3.11 | execution | 129 passed, 13 skipped |\n")
    found = [{"env": "readme", "summary": "4516 passed, 9 skipped", "commit": "abc1234", "date": "2026-12-03"}]
    out = figures.rendered(readme, found)
    assert "| readme (the README command) | 3.11 | whole suite | 4516 passed, 9 skipped (at abc1234) |" in out
    assert "| jax0430 | 3.11 | execution | 129 passed, 13 skipped |" in out  # no record: as it was
    assert "| result (2026-12-03) |" in out
    assert figures.rendered(out, found) == out


def test_the_readme_says_what_the_records_say():
    assert figures.main(["check"]) == 0
    for path in sorted((REPO / ".ci" / "results").glob("*.json")):
        entry = json.loads(path.read_text())
        assert f"{entry['summary']} (at {entry['commit']}) |" in figures.README.read_text(), path.name


def test_ci_run_records_every_pytest_environment():
    script = (REPO / ".ci" / "run").read_text()
    for env in ("readme", "jax0430", "py312"):
        assert f"recorded {env} " in script
    assert "readme_figures.py update" in script


def test_a_record_is_pending_until_the_run_ends(tmp_path, monkeypatch):
    """A suite that runs later in the same .ci/run (jax0430 after readme) compares the README with
    the committed records, not with the ones this run just wrote."""
    monkeypatch.setattr(figures, "RESULTS", tmp_path / "results")
    monkeypatch.setattr(figures, "PENDING", tmp_path / "pending")
    readme = tmp_path / "README.md"
    readme.write_text("| environment | tests | result (x) |\n| --- | --- | --- |\n| readme | whole suite | — |\n")
    monkeypatch.setattr(figures, "README", readme)
    log = tmp_path / "readme.log"
    log.write_text("12 passed, 1 skipped in 3.00s\n")
    assert figures.main(["record", "readme", str(log)]) == 0
    assert figures.records() == [] and figures.main(["check"]) == 0
    assert figures.main(["update"]) == 0
    assert "| readme | whole suite | 12 passed, 1 skipped (at " in readme.read_text()
    assert figures.main(["check"]) == 0 and not list((tmp_path / "pending").glob("*.json"))
