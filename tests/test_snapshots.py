"""Snapshot tests: the unified diff each rule produces for each case under snapshots/."""

from __future__ import annotations

import pytest
from cases import Case, all_cases, fix
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

CASES = all_cases()


class DiffSnapshotExtension(SingleFileSnapshotExtension):
    """Stores each snapshot as a plain ``.diff`` file a reviewer can read."""

    file_extension = "diff"
    _write_mode = WriteMode.TEXT


@pytest.fixture
def diff_snapshot(snapshot):
    return snapshot.use_extension(DiffSnapshotExtension)


@pytest.mark.parametrize("case", [c for c in CASES if c.kind in ("rewrite", "unsafe")], ids=lambda c: c.id)
def test_rewrite_matches_snapshot(case: Case, diff_snapshot):
    result = fix(case)
    assert result.error is None, result.error
    assert result.changed, f"{case.id}: expected a rewrite"
    assert [f for f in result.findings if f.code == case.rule.CODE and f.applied], "no applied finding"
    assert result.diff(case.path.name) == diff_snapshot


@pytest.mark.parametrize("case", [c for c in CASES if c.kind in ("rewrite", "unsafe")], ids=lambda c: c.id)
def test_rewrite_is_idempotent(case: Case):
    once = fix(case).fixed
    twice = fix(case, source=once)
    assert twice.error is None, twice.error
    assert not twice.changed, f"second run changed the file:\n{twice.diff()}"


@pytest.mark.parametrize("case", [c for c in CASES if c.kind == "unsafe"], ids=lambda c: c.id)
def test_unsafe_fix_needs_opt_in(case: Case):
    result = fix(case, unsafe=False)
    assert not result.changed
    assert any(f.fix.value == "unsafe" and not f.applied for f in result.findings)


@pytest.mark.parametrize("case", [c for c in CASES if c.kind == "report"], ids=lambda c: c.id)
def test_report_only_case_is_untouched(case: Case):
    result = fix(case, unsafe=True)
    assert result.error is None, result.error
    assert not result.changed, result.diff()
    findings = [f for f in result.findings if f.code == case.rule.CODE]
    assert findings, f"{case.id}: expected a finding"
    assert all(f.fix.value == "none" and not f.applied for f in findings)
    assert all(f.message for f in findings)


@pytest.mark.parametrize("case", [c for c in CASES if c.kind == "noop"], ids=lambda c: c.id)
def test_noop_case_is_untouched(case: Case):
    result = fix(case, unsafe=True)
    assert result.error is None, result.error
    assert not result.changed, result.diff()
    assert [f for f in result.findings if f.code == case.rule.CODE] == []


def test_every_rule_has_rewrite_or_report_and_noop_cases():
    import jax_codemod

    for rule in jax_codemod.RULES:
        kinds = {case.kind for case in CASES if case.rule is rule}
        assert kinds & {"rewrite", "unsafe", "report"}, f"{rule.CODE} has no rewrite or report case"
        assert "noop" in kinds, f"{rule.CODE} has no no-op case"
