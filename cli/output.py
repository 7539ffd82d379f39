"""Rendering a run's results; the only place that knows output formats."""

from __future__ import annotations

import os
import re
from collections import Counter

import jax_codemod
from jax_codemod.engine.pipeline import FileError, FileResult
from jax_codemod.rule import Finding, FixSafety


class Root:
    """One PATH given on the command line and what the run found under it."""

    def __init__(self, path: str, results: list[FileResult] | None = None,
                 discovery_errors: list[FileError] | None = None) -> None:
        self.path = path
        self.results: list[FileResult] = results if results is not None else []
        # Errors found before any file was read (the path does not exist, a folder cannot be listed).
        self.discovery_errors: list[FileError] = discovery_errors if discovery_errors is not None else []

    @property
    def errors(self) -> list[FileError]:
        return [*self.discovery_errors, *(r.error for r in self.results if r.error is not None)]

    @property
    def base(self) -> str:
        """The folder that paths in this root's part of a report are relative to."""
        return self.path if os.path.isdir(self.path) else os.path.dirname(self.path) or "."


class Report:
    """Everything a run produced, in the order the files were given."""

    def __init__(self, results: list[FileResult] | None = None, errors: list[FileError] | None = None,
                 mode: str = "fix", roots: list[Root] | None = None) -> None:
        self.results: list[FileResult] = results if results is not None else []
        self.errors: list[FileError] = errors if errors is not None else []
        self.mode = mode  # fix | dry-run | check
        self.roots: list[Root] = roots if roots is not None else []

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


def patch_name(path: str, base: str | None = None) -> str:
    """The name a patch gives ``path``: relative to ``base`` (the working directory), through no
    folder link. ``git apply`` refuses a whole patch that names a file "beyond a symbolic link"
    (`examples/demo -> ../src` found `examples/demo/a.py`: issue 53, hole 20), so the file's
    folder is named as it really is; a file whose real folder is outside ``base`` keeps the name
    it was found by (no patch of ``base`` can name it otherwise)."""
    if path.startswith("<"):
        return path
    folder, name = os.path.split(os.path.abspath(path))
    real = os.path.relpath(os.path.join(os.path.realpath(folder), name), os.path.realpath(base or os.curdir))
    if real.startswith(".."):
        return display_path(path) if base is None else os.path.relpath(path, base).replace(os.sep, "/")
    return real.replace(os.sep, "/")


# Every name, message and source line printed, in every format and on stderr, goes through
# ``escape``. An allowlist: only printable characters (``str.isprintable``: letters, marks,
# digits, punctuation, symbols, the ASCII space) are kept as they are. Everything else is
# written as a visible backslash escape: C0 and C1 controls and DEL (a newline starts a forged
# workflow command, an ESC drives the terminal), Unicode format characters (bidi overrides and
# isolates, zero-width joiners and spaces, the BOM: Trojan Source names), line and paragraph
# separators, the other spaces (U+00A0, U+3000, which GitHub's runner trims before `::` as
# whitespace), private-use and unassigned code points, and lone surrogates (a file name's
# non-UTF-8 bytes, written as the byte). And the two ways a CI log line becomes a command:
# `::` at its start (after spaces) and the legacy `##[` anywhere in it.
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_COMMAND = re.compile(r"^( *):(?=:)|#(?=#\[)")


def _escape_char(char: str) -> str:
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a surrogate escape: the raw byte of an undecodable name
        return f"\\x{code - 0xDC00:02x}"
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _escape_command(match: re.Match) -> str:
    # `:` is \x3a, `#` is \x23: the line no longer starts with `::` nor holds `##[`.
    return f"{match.group(1)}\\x3a" if match.group(1) is not None else "\\x23"


def escape(text: str) -> str:
    """``text`` safe to print on one line of a terminal or a CI log (see above)."""
    if not text.isprintable():
        text = "".join(char if char.isprintable() else _escape_char(char) for char in text)
    if "::" in text or "##[" in text:
        text = _COMMAND.sub(_escape_command, text)
    return text


def escape_json(document: str) -> str:
    """A JSON document (``ensure_ascii``: every character that is not ASCII, and every control,
    is already a ``\\u`` escape) with the legacy `##[` command written as ``\\u0023#[``: the same
    value to a JSON reader, never a command in a CI log. A `#` appears only inside strings,
    and never as part of an escape, so the replacement is exact."""
    return document.replace("##[", "\\u0023#[")


def shown_path(path: str) -> str:
    """A path as the text output prints it: escaped, and never starting a workflow command (a
    name that starts with `:`, after spaces, is shown as ``./:name``, still the same file)."""
    shown = display_path(path)
    if shown.lstrip(" ").startswith(":"):
        shown = f"./{shown}"
    return escape(shown)


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


def _cell(item) -> str:
    """``:cell N`` after a notebook's name (as ruff writes it), else nothing."""
    cell = getattr(item, "cell", None)
    return f":cell {cell}" if cell is not None else ""


def finding_line(finding: Finding, mode: str) -> str:
    where = f"{shown_path(finding.path)}{_cell(finding)}:{finding.line}:{finding.column}"
    return f"{where}: {finding.code} {escape(finding.message)}{fix_marker(finding, mode)}"


def error_line(error: FileError) -> str:
    """``error: path:line[:column]: message``; under a syntax error, its source line and a caret."""
    where = shown_path(error.path) + _cell(error)
    if error.line:
        where += f":{error.line}" + (f":{error.column}" if error.column else "")
    text = f"error: {where}: {escape(error.message)}"
    if error.source_line is not None and error.line:
        gutter = str(error.line)
        text += f"\n  {gutter} | {escape(error.source_line.expandtabs(4))}"
        if error.column:
            caret = len(error.source_line[: error.column - 1].expandtabs(4))
            text += f"\n  {' ' * len(gutter)} | {' ' * caret}^"
    return text


def warning_line(path: str, reason: str) -> str:
    return f"warning: {shown_path(path)}: {escape(reason)}"


def statistics(report: Report) -> list[dict]:
    """``--statistics``' rows: one per rule, most frequent first, as in ruff (``fixed``: by this
    run; with --check/--dry-run, that it would fix)."""
    summary = report.summary()["by_rule"]
    names = {f.code: f.name for f in report.findings}
    rows = sorted(summary.items(), key=lambda item: (-item[1]["found"], item[0]))
    return [{"code": code, "name": names[code], "count": counts["found"], "fixed": counts["fixed"]}
            for code, counts in rows]


def render_statistics(report: Report) -> str:
    """``--statistics`` as a text table."""
    rows = statistics(report)
    if not rows:
        return ""
    label = "fixed" if report.mode == "fix" else "fixable"
    width = max(len(row["name"]) for row in rows)
    lines = [f"{'count':>5}  {label:>7}  {'code':<6}  {'name':<{width}}"]
    for row in rows:
        lines.append(f"{row['count']:>5}  {row['fixed']:>7}  {row['code']:<6}  {row['name']:<{width}}")
    return "\n".join(line.rstrip() for line in lines)


def fix_hint(report: Report) -> str:
    """How to apply what is left: the flag that applies it, as ruff's "[*] N fixable with --fix"."""
    hints = []
    pending = sum(1 for f in report.findings if f.applied) if report.mode != "fix" else 0
    if pending:
        flag = "--check" if report.mode == "check" else "--dry-run"
        hints.append(f"[*] {pending} fixable: run `codemod run` without {flag} to apply")
    # A finding another rule's fix made moot (JAX006 under JAX004's fallback) has nothing left
    # for the flag to do; with --unsafe-fixes given, neither has the rest.
    unsafe = sum(
        1 for f in report.findings if not f.applied and f.resolved_by is None and f.fix is FixSafety.UNSAFE
    )
    if unsafe:
        hints.append(f"{unsafe} more fixable with --unsafe-fixes (review those changes)")
    return "\n".join(hints)


def diffs(report: Report) -> list[tuple[str, str]]:
    return [(display_path(r.path), r.diff(patch_name(r.path))) for r in report.changed]


def text_diffs(report: Report) -> list[tuple[str, str]]:
    """``--dry-run``'s text: ``diffs``, except that a notebook shows one diff per changed cell, as
    ruff shows it (the JSON and ``--report`` keep the whole-file diff, which ``git apply`` takes)."""
    from jax_codemod.engine import notebook

    shown = []
    for result in report.changed:
        path = display_path(result.path)
        if notebook.is_notebook(result.path):
            shown += [(path, diff) for _cell, diff in notebook.cell_diffs(path, result.source, result.fixed)]
        else:
            shown.append((path, result.diff(patch_name(result.path))))
    return shown


def render_json(report: Report, with_statistics: bool = False) -> str:
    import json  # only machine-readable output needs it
    document = {
        "version": jax_codemod.__version__,
        "mode": report.mode,
        "findings": [dict(f.to_json(), path=display_path(f.path)) for f in report.findings],
        "errors": [dict(e.to_json(), path=display_path(e.path)) for e in report.errors],
        "summary": report.summary(),
    }
    if report.mode == "dry-run":
        document["diffs"] = [{"path": path, "diff": diff} for path, diff in diffs(report)]
    if with_statistics:
        document["statistics"] = statistics(report)
    return escape_json(json.dumps(document, indent=2))


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
    return f"{shown_path(root.path)}: {render_summary(report.for_root(root))}"


# GitHub Actions workflow commands: https://docs.github.com/actions/reference/workflow-commands-for-github-actions
def _escape_data(text: str) -> str:
    """A command's message: ``escape``d (a newline or a bidi override is shown as its escape,
    as in the text output), then the runner's own escaping of `%`."""
    return escape(text).replace("%", "%25")


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
        if finding.cell is not None:
            # A notebook's lines are the cell's, not the file's: the annotation is on the file.
            properties = {"file": properties["file"], "title": f"{finding.code} (cell {finding.cell})"}
            message = f"cell {finding.cell}:{finding.line}:{finding.column}: {message}"
        lines.append(_workflow_command("notice" if fixed else "error", properties, message))
    for error in report.errors:
        properties = {"file": display_path(error.path), **({"line": error.line} if error.line else {}), "title": "codemod"}
        message = error.message
        if error.cell is not None:
            properties.pop("line", None)
            message = f"cell {error.cell}:{error.line}: {message}"
        lines.append(_workflow_command("error", properties, message))
    return "".join(line + "\n" for line in lines)


def render_report(report: Report, shard: str | None = None) -> str:
    """The ``--report`` file: the JSON output plus every change, and the same again per root.

    A root's paths and diffs are relative to the root, so ``git -C ROOT apply`` takes its patch:
    one pull request per repository in a bulk migration.
    """
    import json

    document = json.loads(render_json(report))
    document.pop("diffs", None)
    document["shard"] = shard
    document["changes"] = [{"path": path, "diff": diff} for path, diff in diffs(report)]
    document["roots"] = [_root_json(report, root) for root in report.roots]
    return escape_json(json.dumps(document, indent=2))


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
                "diff": r.diff(patch_name(r.path, root.base)),
                "codes": sorted({f.code for f in r.findings if f.applied}),
            }
            for r in sub.changed
        ],
        "findings": [dict(f.to_json(), path=relative(f.path)) for f in sub.findings],
        "errors": [dict(e.to_json(), path=relative(e.path)) for e in sub.errors],
    }
