"""Rendering a run's results; the only place that knows output formats."""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field

import jax_codemod
from jax_codemod.engine.pipeline import FileError, FileResult
from jax_codemod.rule import Finding, FixSafety


@dataclass
class Root:
    """One PATH given on the command line and what the run found under it."""

    path: str
    results: list[FileResult] = field(default_factory=list)
    # Errors found before any file was read (the path does not exist, a folder cannot be listed).
    discovery_errors: list[FileError] = field(default_factory=list)

    @property
    def errors(self) -> list[FileError]:
        return [*self.discovery_errors, *(r.error for r in self.results if r.error is not None)]

    @property
    def base(self) -> str:
        """The folder that paths in this root's part of a report are relative to."""
        return self.path if os.path.isdir(self.path) else os.path.dirname(self.path) or "."


@dataclass
class Report:
    """Everything a run produced, in the order the files were given."""

    results: list[FileResult] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    mode: str = "fix"  # fix | dry-run | check
    roots: list[Root] = field(default_factory=list)

    def for_root(self, root: Root) -> Report:
        return Report(results=root.results, errors=root.errors, mode=self.mode)

    @property
    def findings(self) -> list[Finding]:
        return [finding for result in self.results for finding in result.findings]

    @property
    def changed(self) -> list[FileResult]:
        return [result for result in self.results if result.changed and result.error is None]

    @property
    def remaining(self) -> list[Finding]:
        """Findings the run leaves for a person (not fixed by this run)."""
        return [f for f in self.findings if not (_fixed(f) and self.mode == "fix")]

    @property
    def unfixed(self) -> list[Finding]:
        return [f for f in self.findings if not _fixed(f)]

    def summary(self) -> dict:
        """Counts per rule; ``fixed`` counts each rule's own edits, ``resolved`` (present only
        when non-zero) the findings another rule's fix made moot."""
        found = Counter(f.code for f in self.findings)
        fixed = Counter(f.code for f in self.findings if f.applied)
        resolved = Counter(f.code for f in self.findings if f.resolved_by and not f.applied)
        by_rule = {}
        for code in sorted(found):
            counts = {"found": found[code], "fixed": fixed[code]}
            if resolved[code]:
                counts["resolved"] = resolved[code]
            by_rule[code] = counts
        return {
            "files_scanned": len(self.results),
            "files_changed": len(self.changed),
            "files_failed": len(self.errors),
            "findings": sum(found.values()),
            "fixed": sum(fixed.values()),
            "by_rule": by_rule,
        }


def _fixed(finding: Finding) -> bool:
    """The run took care of it: its own rule's fix, or another rule's that made it moot."""
    return finding.applied or finding.resolved_by is not None


def display_path(path: str) -> str:
    """Paths relative to the working directory when inside it, as git shows them."""
    if path.startswith("<"):
        return path
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def fix_marker(finding: Finding, mode: str) -> str:
    if finding.resolved_by and not finding.applied:
        return f" [resolved by {finding.resolved_by}'s fix]"
    if finding.applied:
        return " [fixed]" if mode == "fix" else " [*]"
    if finding.fix is FixSafety.SAFE:
        return " [*]"
    if finding.fix is FixSafety.UNSAFE:
        return " [unsafe fix available: --unsafe-fixes]"
    return ""


def finding_line(finding: Finding, mode: str) -> str:
    where = f"{display_path(finding.path)}:{finding.line}:{finding.column}"
    return f"{where}: {finding.code} {finding.message}{fix_marker(finding, mode)}"


def error_line(error: FileError) -> str:
    where = display_path(error.path) + (f":{error.line}" if error.line else "")
    return f"error: {where}: {error.message}"


def diffs(report: Report) -> list[tuple[str, str]]:
    return [(display_path(r.path), r.diff(display_path(r.path))) for r in report.changed]


def render_json(report: Report) -> str:
    document = {
        "version": jax_codemod.__version__,
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
    resolvers: dict[str, set[str]] = {}
    for finding in report.findings:
        if finding.resolved_by and not finding.applied:
            resolvers.setdefault(finding.code, set()).add(finding.resolved_by)
    rules = ", ".join(
        f"{code} {counts['found']}"
        + (f" ({counts['fixed']} fixed)" if counts["fixed"] and report.mode == "fix" else "")
        + (
            f" ({counts['resolved']} resolved by {', '.join(sorted(resolvers[code]))}'s fix)"
            if counts.get("resolved")
            else ""
        )
        for code, counts in summary["by_rule"].items()
    )
    return f"{line}; findings: {rules}" if rules else f"{line}; no findings"


def root_summary_line(report: Report, root: Root) -> str:
    return f"{display_path(root.path)}: {render_summary(report.for_root(root))}"


# GitHub Actions workflow commands: https://docs.github.com/actions/reference/workflow-commands-for-github-actions
def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _workflow_command(level: str, properties: dict, message: str) -> str:
    fields = ",".join(f"{key}={_escape_property(str(value))}" for key, value in properties.items())
    return f"::{level} {fields}::{_escape_data(message)}"


def render_github(report: Report) -> str:
    """One annotation per finding (findings this run fixed are notices) and per error."""
    lines = []
    for finding in report.findings:
        fixed = _fixed(finding) and report.mode == "fix"
        properties = {
            "file": display_path(finding.path),
            "line": finding.line,
            "col": finding.column,
            "endLine": finding.span.end_line,
            # The span's 0-based exclusive end is the 1-based inclusive end column GitHub expects.
            "endColumn": max(finding.span.end_column, 1),
            "title": finding.code,
        }
        message = f"{finding.code} {finding.message}{fix_marker(finding, report.mode)}"
        lines.append(_workflow_command("notice" if fixed else "error", properties, message))
    for error in report.errors:
        properties = {"file": display_path(error.path), **({"line": error.line} if error.line else {}), "title": "codemod"}
        lines.append(_workflow_command("error", properties, error.message))
    return "".join(line + "\n" for line in lines)


def render_report(report: Report, shard: str | None = None) -> str:
    """The ``--report`` file: the JSON output plus every change, and the same again per root.

    A root's paths and diffs are relative to the root, so ``git -C ROOT apply`` takes its patch:
    one pull request per repository in a bulk migration.
    """
    document = json.loads(render_json(report))
    document.pop("diffs", None)
    document["shard"] = shard
    document["changes"] = [{"path": path, "diff": diff} for path, diff in diffs(report)]
    document["roots"] = [_root_json(report, root) for root in report.roots]
    return json.dumps(document, indent=2)


def _root_json(report: Report, root: Root) -> dict:
    def relative(path: str) -> str:
        return path if path.startswith("<") else os.path.relpath(path, root.base).replace(os.sep, "/")

    sub = report.for_root(root)
    return {
        "root": display_path(root.path),
        "summary": sub.summary(),
        "changes": [
            {
                "path": relative(r.path),
                "diff": r.diff(relative(r.path)),
                "codes": sorted({f.code for f in r.findings if f.applied}),
            }
            for r in sub.changed
        ],
        "findings": [dict(f.to_json(), path=relative(f.path)) for f in sub.findings],
        "errors": [dict(e.to_json(), path=relative(e.path)) for e in sub.errors],
    }
