"""Rendering a run's results; the only place that knows output formats."""

from __future__ import annotations

import json
import os
import re
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


# What must never reach a terminal or a CI log raw: C0 and C1 controls and DEL (a newline
# starts a forged `::error::`/`::add-mask::` workflow command, an ESC drives the terminal),
# Unicode line and paragraph separators, and lone surrogates (a file name's non-UTF-8 bytes).
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape_char(match: re.Match) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a surrogate escape: the raw byte of an undecodable name
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def escape(text: str) -> str:
    """``text`` with every control character written as a backslash escape, on one line."""
    return _UNSAFE.sub(_escape_char, text)


def shown_path(path: str) -> str:
    """A path as the text output prints it: escaped, and never starting a workflow command."""
    shown = escape(display_path(path))
    return f"./{shown}" if shown.startswith(":") else shown


def fix_marker(finding: Finding, mode: str) -> str:
    if finding.applied:
        return " [fixed]" if mode == "fix" else " [*]"
    if finding.fix is FixSafety.SAFE:
        return " [*]"
    if finding.fix is FixSafety.UNSAFE:
        return " [unsafe fix available: --unsafe-fixes]"
    return ""


def finding_line(finding: Finding, mode: str) -> str:
    where = f"{shown_path(finding.path)}:{finding.line}:{finding.column}"
    return f"{where}: {finding.code} {escape(finding.message)}{fix_marker(finding, mode)}"


def error_line(error: FileError) -> str:
    where = shown_path(error.path) + (f":{error.line}" if error.line else "")
    return f"error: {where}: {escape(error.message)}"


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
    rules = ", ".join(
        f"{code} {counts['found']}" + (f" ({counts['fixed']} fixed)" if counts["fixed"] and report.mode == "fix" else "")
        for code, counts in summary["by_rule"].items()
    )
    return f"{line}; findings: {rules}" if rules else f"{line}; no findings"


def root_summary_line(report: Report, root: Root) -> str:
    return f"{shown_path(root.path)}: {render_summary(report.for_root(root))}"


# GitHub Actions workflow commands: https://docs.github.com/actions/reference/workflow-commands-for-github-actions
def _escape_data(text: str) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return _SURROGATE.sub(lambda match: f"%{ord(match.group()) - 0xDC00:02X}", text)


_SURROGATE = re.compile("[\udc80-\udcff]")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _workflow_command(level: str, properties: dict, message: str) -> str:
    fields = ",".join(f"{key}={_escape_property(str(value))}" for key, value in properties.items())
    return f"::{level} {fields}::{_escape_data(message)}"


def render_github(report: Report) -> str:
    """One annotation per finding (findings this run fixed are notices) and per error."""
    lines = []
    for finding in report.findings:
        fixed = finding.applied and report.mode == "fix"
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
