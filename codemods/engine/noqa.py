"""``codemod run --add-noqa``: a ``# noqa: CODE`` comment on the line of each finding, as ruff's
``--add-noqa`` does, so a repository's findings can be baselined before ``--check`` is turned on.

A comment suppresses the findings that start on its line (``FileContext.suppressions``), so each
goes at the end of its finding's first line. That is only possible where the line ends outside a
string and without a backslash continuation: the tokenizer says which lines end that way (an NL or
NEWLINE token, or a comment, on the line). Any other finding is left, and counted, for a person.
An existing ``# noqa: CODES`` that ends its comment gets the new codes appended; any other comment
keeps its text and the ``# noqa`` follows it. Only bytes after the end of a line's content are
added: every other byte of the file stays as it was, and the result must parse to the same tree
and suppress every finding it was made for, or nothing is written.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterable
from dataclasses import dataclass

from jax_codemod.analysis.context import _BARE_NOQA, _NOQA, FileContext
from jax_codemod.engine.notebook import Notebook, NotebookError, _check_masks, is_notebook
from jax_codemod.engine.pipeline import decode

# A line with its ending, where Python's tokenizer ends lines (CRLF, CR, LF), as text or bytes.
_LINE_TEXT = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_TRAILING = re.compile(r"[ \t\f]*(?:\r\n|\r|\n)?\Z")


@dataclass
class Annotated:
    """What ``--add-noqa`` made of one file: its new bytes (None: nothing to write), how many
    lines got a comment or more codes in one, and the findings it could not annotate."""

    fixed: bytes | None
    added: int
    # (where, reason): the line as the finding reports it, in a notebook "cell N:LINE".
    refused: list[tuple[str, str]]


def annotate(path: str, source: bytes, findings: Iterable) -> Annotated:
    """``source`` with a ``# noqa`` for every finding of ``findings`` (their ``code`` and ``line``;
    in a notebook their ``cell`` and the line in it)."""
    findings = list(findings)
    if is_notebook(path):
        return _annotate_notebook(source, findings)
    try:
        text = decode(source)
    except (SyntaxError, UnicodeDecodeError, LookupError) as error:
        return Annotated(None, 0, [(str(f.line), f"cannot read the file: {error}") for f in findings])
    wanted: dict[int, set[str]] = {}
    for finding in findings:
        wanted.setdefault(finding.line, set()).add(finding.code)
    # Bytes and text have their line ends at the same places (every encoding Python source may
    # use spells CR and LF as those bytes); latin-1 maps each byte to one character and back.
    lines = _LINE_TEXT.findall(source.decode("latin-1"))
    edited, added, refused = _annotate_lines(text, lines, wanted)
    shown = [(str(line), reason) for line, reason in refused]
    if not added:
        return Annotated(None, 0, shown)
    fixed = "".join(edited).encode("latin-1")
    problem = _verify(path, text, decode(fixed), wanted, refused)
    if problem:
        return Annotated(None, 0, [(str(line), problem) for line in sorted(wanted)])
    return Annotated(fixed, added, shown)


def _annotate_notebook(source: bytes, findings: list) -> Annotated:
    """A notebook's findings carry their cell and the line in it; the comments go into the
    module the rules read, which is written back cell by cell as a fix is."""
    try:
        notebook = Notebook.parse(source)
    except NotebookError as error:
        return Annotated(None, 0, [(_where(f.cell, f.line), str(error)) for f in findings])
    cells = {cell.number: cell for cell in notebook.cells}
    wanted: dict[int, set[str]] = {}
    where: dict[int, str] = {}
    refused: list[tuple[str, str]] = []
    for finding in findings:
        cell = cells.get(finding.cell)
        if cell is None:
            refused.append((_where(finding.cell, finding.line), "not in a code cell"))
            continue
        line = cell.first_line + finding.line - 1
        wanted.setdefault(line, set()).add(finding.code)
        where[line] = _where(finding.cell, finding.line)
    code = notebook.code
    edited, added, more = _annotate_lines(code, _LINE_TEXT.findall(code), wanted)
    refused += [(where[line], reason) for line, reason in more]
    if not added:
        return Annotated(None, 0, refused)
    new_code = "".join(edited)
    problem = _verify("notebook.py", code, new_code, wanted, more)
    try:
        if problem:
            raise NotebookError(problem)
        fixed = notebook.rebuild(_check_masks(new_code, notebook)).encode("utf-8")
    except NotebookError as error:
        return Annotated(None, 0, [(where[line], str(error)) for line in sorted(wanted)])
    return Annotated(fixed, added, refused)


def _where(cell: int | None, line: int) -> str:
    return str(line) if cell is None else f"cell {cell}:{line}"


def _annotate_lines(text: str, lines: list[str], wanted: dict[int, set[str]]):
    """(lines with the comments, how many lines changed, refused (line, reason)) for ``text``,
    whose lines (as text, or as bytes read as latin-1) are ``lines``."""
    ends = _line_ends(text)
    edited = list(lines)
    added = 0
    refused = []
    for number in sorted(wanted):
        codes = ", ".join(sorted(wanted[number]))
        comment = ends.get(number)
        if comment is None or number > len(lines):
            refused.append((number, "the line ends inside a string or continues with a backslash"))
            continue
        line = edited[number - 1]
        cut = _TRAILING.search(line).start()
        matches = list(_NOQA.finditer(comment))
        if _BARE_NOQA.search(comment):
            continue  # already suppresses every code (a finding here would not have been reported)
        if matches and not comment[matches[-1].end():].strip():
            insert = f", {codes}"  # extend the noqa that ends the comment
        else:
            insert = f"  # noqa: {codes}"
        edited[number - 1] = line[:cut] + insert + line[cut:]
        added += 1
    return edited, added, refused


def _line_ends(text: str) -> dict[int, str]:
    """Line -> the comment already on it ("" for none), for each line a comment may end: one
    whose end is outside a string and not a backslash continuation."""
    found: dict[int, str] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(text, newline=None).readline):  # CR ends rows too
            if token.type == tokenize.COMMENT:
                found[token.start[0]] = token.string
            elif token.type in (tokenize.NL, tokenize.NEWLINE):
                found.setdefault(token.start[0], "")
    except (tokenize.TokenError, SyntaxError, UnicodeDecodeError):
        return {}
    return found


def _verify(path: str, before: str, after: str, wanted: dict[int, set[str]], refused) -> str | None:
    """Why the annotated text must not be written (None: it may): it must parse to the tree the
    original parses to, and suppress every finding it was made for."""
    try:
        if ast.dump(ast.parse(before)) != ast.dump(ast.parse(after)):
            return "adding the comment would change the code"
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
        return f"cannot parse: {error}"
    skipped = {line for line, _reason in refused}
    context = FileContext(path, after, ast.Module(body=[], type_ignores=[]))
    for line, codes in wanted.items():
        if line not in skipped and not all(context.is_suppressed(code, line) for code in codes):
            return "the comment would not suppress the finding"
    return None
