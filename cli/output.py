"""Rendering a run's results; the only place that knows output formats."""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field

import codemods
from codemods.engine import FileError, FileResult
from codemods.rule import Finding, FixSafety


@dataclass
class Report:
    """Everything a run produced, in the order the files were given."""

    results: list[FileResult] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    mode: str = "fix"  # fix | dry-run | check

    @property
    def findings(self) -> list[Finding]:
        return [finding for result in self.results for finding in result.findings]

    @property
    def changed(self) -> list[FileResult]:
        return [result for result in self.results if result.changed and result.error is None]

    @property
    def remaining(self) -> list[Finding]:
        """Findings the run leaves for a person (not fixed by this run)."""
        return [f for f in self.findings if not (f.applied and self.mode == "fix")]

    @property
    def unfixed(self) -> list[Finding]:
        return [f for f in self.findings if not f.applied]

    def summary(self) -> dict:
        found = Counter(f.code for f in self.findings)
        fixed = Counter(f.code for f in self.findings if f.applied)
        return {
            "files_scanned": len(self.results),
            "files_changed": len(self.changed),
            "files_failed": len(self.errors),
            "findings": sum(found.values()),
            "fixed": sum(fixed.values()),
            "by_rule": {code: {"found": found[code], "fixed": fixed[code]} for code in sorted(found)},
        }


def display_path(path: str) -> str:
    """Paths relative to the working directory when inside it, as git shows them."""
    if path.startswith("<"):
        return path
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def finding_line(finding: Finding, mode: str) -> str:
    marker = ""
    if finding.applied:
        marker = " [fixed]" if mode == "fix" else " [*]"
    elif finding.fix is FixSafety.SAFE:
        marker = " [*]"
    elif finding.fix is FixSafety.UNSAFE:
        marker = " [unsafe fix available: --unsafe-fixes]"
    where = f"{display_path(finding.path)}:{finding.line}:{finding.column}"
    return f"{where}: {finding.code} {finding.message}{marker}"


def error_line(error: FileError) -> str:
    where = display_path(error.path) + (f":{error.line}" if error.line else "")
    return f"error: {where}: {error.message}"


def diffs(report: Report) -> list[tuple[str, str]]:
    return [(display_path(r.path), r.diff(display_path(r.path))) for r in report.changed]


def render_json(report: Report) -> str:
    document = {
        "version": codemods.__version__,
        "mode": report.mode,
        "findings": [dict(f.to_json(), path=display_path(f.path)) for f in report.findings],
        "errors": [dict(e.to_json(), path=display_path(e.path)) for e in report.errors],
        "summary": report.summary(),
    }
    if report.mode == "dry-run":
        document["diffs"] = [{"path": path, "diff": diff} for path, diff in diffs(report)]
    return json.dumps(document, indent=2)


def render_summary(report: Report) -> str:
    summary = report.summary()
    verb = {"fix": "changed", "dry-run": "would change", "check": "would change"}[report.mode]
    if report.mode == "check":
        changed = sum(1 for r in report.results if r.changed)
    else:
        changed = summary["files_changed"]
    line = f"{summary['files_scanned']} files scanned, {changed} {verb}, {summary['files_failed']} failed"
    rules = ", ".join(
        f"{code} {counts['found']}" + (f" ({counts['fixed']} fixed)" if counts["fixed"] and report.mode == "fix" else "")
        for code, counts in summary["by_rule"].items()
    )
    return f"{line}; findings: {rules}" if rules else f"{line}; no findings"
