"""Snapshot tests: the unified diff each rule produces for each case under snapshots/."""

from __future__ import annotations

from collections import Counter

import pytest
from cases import Case, all_cases, fix

CASES = all_cases()


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


# Every rewrite case, with no exceptions: a fix whose output this rule would question again
# ("cannot tell whether `v` is a capsule") is not made (issue 31), so none is marked.
REWRITES_MARKED = [c for c in CASES if c.kind in ("rewrite", "unsafe")]


@pytest.mark.parametrize("case", REWRITES_MARKED, ids=lambda c: c.id)
def test_a_fix_leaves_no_finding_of_its_own(case: Case):
    # The fixed file reports only what the original reported: a fix that leaves something new
    # to report (a variable whose name still says "capsule") keeps `--check` failing after
    # `codemod run`, and tells the user the fixed code is broken.
    from jax_codemod.engine.pipeline import check_source

    rules = (case.rule(case.options),)
    _, before = check_source(case.source, case.path.name, rules)
    _, after = check_source(fix(case).fixed, case.path.name, rules)
    new = Counter(f.message for f in after) - Counter(f.message for f in before)
    assert not new, f"the fixed file reports what the original did not: {sorted(new)}"


def _changed_lines(before: bytes, after: bytes) -> set[int]:
    """The 1-based lines of ``after`` that an edit wrote (inserted or replaced)."""
    import difflib

    old, new = before.splitlines(), after.splitlines()
    lines: set[int] = set()
    for tag, _i1, _i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag != "equal":
            lines.update(range(j1 + 1, j2 + 1))
    return lines


def _unresolved_jax_imports(tree) -> list[str]:
    """The module-level, unguarded imports of jax modules and names that the installed JAX lacks."""
    import ast
    import importlib

    missing = []
    for statement in tree.body:
        if isinstance(statement, ast.Import):
            names = [(alias.name, None) for alias in statement.names]
        elif isinstance(statement, ast.ImportFrom) and not statement.level and statement.module:
            names = [(statement.module, alias.name) for alias in statement.names]
        else:
            continue
        for module, name in names:
            if module.split(".")[0] not in ("jax", "jaxlib"):
                continue
            try:
                imported = importlib.import_module(module)
            except ImportError:
                missing.append(module)
                continue
            if name is not None and name != "*" and not hasattr(imported, name):
                try:
                    importlib.import_module(f"{module}.{name}")
                except ImportError:
                    missing.append(f"{module}.{name}")
    return missing


@pytest.mark.parametrize("case", REWRITES_MARKED, ids=lambda c: c.id)
def test_a_fix_leaves_a_file_that_compiles_imports_and_checks_clean_at_its_site(case: Case):
    # The fixed file compiles, its module-level jax imports resolve on the installed JAX (CI
    # runs the oldest and the newest), and checking it again finds nothing of the rule's own on
    # the lines the fix wrote: a fix whose own output is a finding keeps `--check` failing forever.
    import ast

    from jax_codemod.engine.pipeline import check_source

    fixed = fix(case).fixed
    compile(fixed, case.path.name, "exec")
    if case.unmet_version_requirement() is None:  # a case whose setup needs a newer JAX imports it
        assert _unresolved_jax_imports(ast.parse(fixed)) == []
    _, after = check_source(fixed, case.path.name, (case.rule(case.options),))
    written = _changed_lines(case.source, fixed)
    at_site = [f"{f.line}: {f.message}" for f in after if f.code == case.rule.CODE and f.line in written]
    assert not at_site, at_site


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
