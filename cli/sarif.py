"""``--format sarif``: SARIF 2.1.0, the format code-scanning services (GitHub, GitLab, Azure) read.

The engine computes a whole fixed file, not one edit per finding, so a file's fix is one SARIF
``fix`` whose ``replacements`` are the hunks of the file's diff (whole lines deleted, text
inserted), attached to every result whose finding that fix resolves. Regions carry both
line/column and character offsets; both describe the same text.
"""

from __future__ import annotations

import json
import os
import re
import urllib.parse
from pathlib import Path

import jax_codemod
from jax_codemod import docs
from jax_codemod.cli.output import Report, display_path, escape_json
from jax_codemod.engine.pipeline import FileResult, decode
from jax_codemod.engine.splice import line_opcodes
from jax_codemod.rule import Finding

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"
# SARIF's lines end at CR, LF or CRLF only (str.splitlines also splits at form feeds and more).
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def render_sarif(report: Report) -> str:
    rules = list(jax_codemod.RULES)
    index = {rule.CODE: position for position, rule in enumerate(rules)}
    results = []
    for result in report.results:
        fix = _fix(result) if report.mode != "fix" and result.changed and result.error is None else None
        for finding in result.findings:
            taken_care_of = finding.applied or finding.resolved_by is not None
            results.append(_result(finding, index, report.mode, fix if taken_care_of else None))
    run = {
        "tool": {
            "driver": {
                "name": "codemod",
                "version": jax_codemod.__version__,
                "semanticVersion": jax_codemod.__version__,
                "rules": [_rule(rule) for rule in rules],
            }
        },
        "originalUriBaseIds": {SRCROOT: {"uri": Path(os.getcwd()).as_uri() + "/"}},
        "columnKind": "unicodeCodePoints",
        "invocations": [
            {
                "executionSuccessful": not report.errors,
                "toolExecutionNotifications": [_notification(error) for error in report.errors],
            }
        ],
        "results": results,
    }
    document = {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}
    return escape_json(json.dumps(document, indent=2))


def artifact_location(path: str) -> dict:
    """A URI relative to the working directory (``%SRCROOT%``) when the file is inside it."""
    shown = display_path(path)
    if os.path.isabs(shown):
        return {"uri": Path(shown).as_uri()}
    # A name's raw bytes, percent-encoded: a name that is not UTF-8 (its bytes arrive as
    # surrogate escapes) still has a URI that names exactly that file.
    return {"uri": urllib.parse.quote(Path(shown).as_posix().encode("utf-8", "surrogateescape")), "uriBaseId": SRCROOT}


_SURROGATE = re.compile("[\ud800-\udfff]")


def _text(text: str) -> str:
    """A message for a SARIF ``text``: valid Unicode, with a name's undecodable bytes as ``\\xNN``."""
    return _SURROGATE.sub(lambda match: f"\\x{ord(match.group()) & 0xFF:02x}", text)


def _rule(rule) -> dict:
    return {
        "id": rule.CODE,
        "name": rule.NAME,
        "shortDescription": {"text": docs.summary(rule)},
        "fullDescription": {"text": " ".join(docs.sections(rule).get("What it does", "").split())},
        "help": {"text": docs.explain(rule), "markdown": docs.explain(rule)},
        "defaultConfiguration": {"level": "error", "enabled": rule.DEFAULT_ENABLED},
        "properties": {"fixSafety": rule.FIX_SAFETY.value},
    }


def _result(finding: Finding, index: dict, mode: str, fix: dict | None) -> dict:
    fixed = (finding.applied or finding.resolved_by is not None) and mode == "fix"
    span = finding.span
    result = {
        "ruleId": finding.code,
        "level": "note" if fixed else "error",
        "message": {"text": _text(finding.message)},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": artifact_location(finding.path),
                    "region": {
                        "startLine": finding.line,
                        "startColumn": finding.column,
                        "endLine": span.end_line,
                        "endColumn": span.end_column + 1,
                    },
                }
            }
        ],
        "properties": {"fixSafety": finding.fix.value, "applied": finding.applied},
    }
    if finding.cell is not None:
        # A notebook: lines count within the cell, not within the file's JSON, so the location is
        # the file, and the cell and its line are named in the message and the properties.
        del result["locations"][0]["physicalLocation"]["region"]
        result["message"]["text"] = f"cell {finding.cell}:{finding.line}:{finding.column}: " + result["message"]["text"]
        result["properties"].update(cell=finding.cell, cellLine=finding.line, cellColumn=finding.column)
    if finding.resolved_by is not None:
        # Another rule's fix made this finding moot: say which, in the message too.
        result["properties"]["resolvedBy"] = finding.resolved_by
        result["message"]["text"] += f" (resolved by {finding.resolved_by}'s fix)"
    if finding.code in index:
        result["ruleIndex"] = index[finding.code]
    if fix is not None:
        result["fixes"] = [fix]
    return result


def _notification(error) -> dict:
    location = {"artifactLocation": artifact_location(error.path)}
    text = _text(error.message)
    if error.line and error.cell is not None:
        text = f"cell {error.cell}:{error.line}: {text}"
    elif error.line:
        location["region"] = {"startLine": error.line}
    return {"level": "error", "message": {"text": text}, "locations": [{"physicalLocation": location}]}


def _fix(result: FileResult) -> dict:
    codes = ", ".join(sorted({f.code for f in result.findings if f.applied}))
    return {
        "description": {"text": _text(f"Apply codemod's fixes ({codes}) to {display_path(result.path)}")},
        "artifactChanges": [
            {"artifactLocation": artifact_location(result.path), "replacements": replacements(result)}
        ],
    }


def replacements(result: FileResult) -> list[dict]:
    """The diff of ``result`` as SARIF replacements, in file order, against the original text."""
    old = lines(decode(result.source))
    new = lines(decode(result.fixed))
    # Character offset of the start of each original line, plus the end of the file.
    starts = [0]
    for line in old:
        starts.append(starts[-1] + len(line))
    out = []
    # line_opcodes: difflib's matcher is quadratic on repeated lines (issue 53: 29 s for 16 kB).
    for tag, i1, i2, j1, j2 in line_opcodes(old, new):
        if tag == "equal":
            continue
        region = {
            "startLine": i1 + 1,
            "startColumn": 1,
            **_end_position(old, i1, i2),
            "charOffset": starts[i1],
            "charLength": starts[i2] - starts[i1],
        }
        replacement = {"deletedRegion": region}
        if j2 > j1:
            replacement["insertedContent"] = {"text": "".join(new[j1:j2])}
        out.append(replacement)
    return out


def _end_position(old: list[str], i1: int, i2: int) -> dict:
    """Where the deleted lines ``old[i1:i2]`` end: the start of the next line after a newline."""
    if i2 == i1:  # a pure insertion: an empty region before line i1 + 1
        return {"endLine": i1 + 1, "endColumn": 1}
    last = old[i2 - 1]
    if last.endswith(("\n", "\r")):
        return {"endLine": i2 + 1, "endColumn": 1}
    return {"endLine": i2, "endColumn": len(last) + 1}


def lines(text: str) -> list[str]:
    return _LINE.findall(text)
