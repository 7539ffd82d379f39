"""Jupyter notebooks (``.ipynb``), checked and fixed as ruff does them.

A notebook's code cells are one module to the rules (a name imported in cell 1 is known in cell 5),
with the boundaries kept: each cell ends with a line of its own (``# __codemod_cell_N__``), so the
fixed module splits back into the same cells. IPython syntax that is not Python (line magics
``%time``, shell escapes ``!pip``, ``x = !ls``, help ``obj?``, and cells under a cell magic such as
``%%bash``) is masked line by line with a ``pass`` statement at the same indentation, and put back
verbatim after the fix; a fix that would move or drop a mask is refused.

A fixed notebook is written by replacing, in the file's own text, only the ``source`` values of
the cells that changed, in the style the file uses (a list of lines or one string, the list's
indentation, ASCII escapes or not): every other byte (outputs, metadata, key order, indentation,
the trailing newline) stays as it was. Findings and errors name the cell (1-based, counting every
cell of the notebook, as the file lists them) and the line within it.

Nothing here prints; ``process_notebook`` returns a ``FileResult`` like ``process_source``.
"""

from __future__ import annotations

import bisect
import difflib
import json
import re
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING

from jax_codemod.engine.splice import line_opcodes

if TYPE_CHECKING:
    from jax_codemod.engine.results import FileResult

SUFFIX = ".ipynb"


@dataclass(frozen=True)
class _Markers:
    """The lines and comments that stand for a cell's end, a masked line and a line magic in the
    module the rules see. Their names carry a tag the notebook's own text never spells
    (``__codemod_`` where the text has no ``__codemod``, else ``__codemod1_``, ...): a comment of
    the user's that spells a marker is the user's code, never taken for one (issue 53, hole 11)."""

    cell: str
    cell_line: re.Pattern
    mask: str
    mask_line: re.Pattern
    prefix: str
    prefix_line: re.Pattern


@lru_cache(maxsize=8)
def _markers(tag: str) -> _Markers:
    name = f"__codemod{tag}_"
    return _Markers(
        cell="# " + name + "cell_{}__",
        cell_line=re.compile(rf"^# {name}cell_(\d+)__\n", re.MULTILINE),
        mask="pass  # " + name + "mask_{}__",
        mask_line=re.compile(rf"^([ \t]*)pass  # {name}mask_(\d+)__(?=\r?$)", re.MULTILINE),
        prefix="  # " + name + "magic_{}__",
        prefix_line=re.compile(rf"^([ \t]*)(.*?)  # {name}magic_(\d+)__(?=\r?$)", re.MULTILINE),
    )


_PLAIN = _markers("")
_TAGS = re.compile(r"__codemod(\d*)_")
# Any notebook's masks and cell ends, whatever their tag: what the fixer keeps its insertions below.
MASK_COMMENT = re.compile(r"# __codemod\d*_mask_\d+__\Z")
CELL_END_COMMENT = re.compile(r"# __codemod\d*_cell_\d+__\Z")


def _markers_for(sources: Iterable[str]) -> _Markers:
    """Markers whose tag none of ``sources`` spells (one pass over them: linear)."""
    used = {found.group(1) for source in sources for found in _TAGS.finditer(source)}
    if not used:
        return _PLAIN
    number = 1
    while str(number) in used:
        number += 1
    return _markers(str(number))


# A line magic whose argument is a Python statement (`%time y = f(x)`): the statement is checked and
# may be fixed; the magic is held in a comment at the end of the line and put back before it.
_PYTHON_LINE_MAGIC = re.compile(r"([ \t]*)(%(?:time|timeit|prun)[ \t]+)(?![-\s])")
# Cell magics whose body is Python (ruff's list): only their first line is masked.
_PYTHON_CELL_MAGICS = frozenset({"capture", "debug", "prun", "pypy", "python", "python3", "time", "timeit"})
# Those whose body IPython transforms as it does a cell (`shell.run_cell`, `shell.transform_cell`):
# `!ls` and `%env` work there. `%%python` runs its body as a script in another process, `%%debug`
# as given: there they are not IPython syntax.
_TRANSFORMED_CELL_MAGICS = frozenset({"capture", "prun", "time", "timeit"})
# `x = !ls`, `out = %timeit -o f()`: an assignment from a shell escape or a line magic.
_MAGIC_ASSIGNMENT = re.compile(r"[ \t]*[A-Za-z_][\w.]*(?:[ \t]*,[ \t]*[A-Za-z_][\w.]*)*[ \t]*=[ \t]*[%!]")
# What a bracket count skips (roughly: one-line strings and comments). A string left open runs to
# the line's end: a closing quote that is required would make each quote of `"\'\'\'...` scan the
# rest of the line again (issue 53: quadratic, 11 s for a 90 kB notebook).
_STRING_OR_COMMENT = re.compile(r"'(?:[^'\\\n]|\\.)*'?|\"(?:[^\"\\\n]|\\.)*\"?|#.*")
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_LINES = re.compile(r"[^\n]*\n|[^\n]+\Z")


def is_notebook(path: str) -> bool:
    return path.endswith(SUFFIX)


class NotebookError(ValueError):
    """Not a notebook this module can read, or a fix it cannot write back."""


@dataclass
class CodeCell:
    number: int  # 1-based, over every cell of the notebook
    source: str  # the cell's code, joined
    span: tuple[int, int]  # its ``source`` value in the notebook's text
    as_list: bool  # written as a list of lines (nbformat's way) or as one string
    added_newline: bool  # the module gave it a final newline it does not have
    first_line: int = 0  # its first line in the module (1-based)
    lines: int = 0  # how many lines of the module it covers (its end line excluded)
    # The cell as IPython runs it (``_without_leading_indent``): its source, but where the first
    # line is indented.
    runs_as: str = ""


class Notebook:
    """A parsed notebook: its text, its code cells, and the module the rules see."""

    def __init__(self, text: str, cells: list[CodeCell], masks: list[str], bom: str = "") -> None:
        self.text = text
        self.bom = bom  # a UTF-8 byte order mark before the JSON, written back as it was
        self.cells = cells
        self.masks = masks  # mask number -> the original line (without its newline)
        self.prefixes: list[str] = []  # magic number -> the line magic before its statement
        self.shifts: dict[int, int] = {}  # module line -> columns its line magic took
        self.markers = markers = _markers_for(cell.source for cell in cells)
        parts = []
        line = 1
        for cell in cells:
            cell.runs_as, indent, dedented = _without_leading_indent(cell.source)
            code = _masked(cell.runs_as, masks, self.prefixes, markers)
            for offset, text_line in enumerate(_LINES.findall(code)):
                found = markers.prefix_line.match(text_line)
                if found:
                    self.shifts[line + offset] = len(self.prefixes[int(found.group(3))])
                if offset in dedented:
                    self.shifts[line + offset] = self.shifts.get(line + offset, 0) + len(indent)
            cell.added_newline = bool(code) and not code.endswith("\n")
            if cell.added_newline:
                code += "\n"
            cell.first_line, cell.lines = line, code.count("\n")
            parts.append(code + markers.cell.format(cell.number) + "\n")
            line += cell.lines + 1
        self.code = "".join(parts)
        self._first_lines = [cell.first_line for cell in cells]

    @classmethod
    def parse(cls, raw: bytes) -> Notebook:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise NotebookError(f"not UTF-8 (byte {error.start})") from None
        bom = "\ufeff" if text.startswith("\ufeff") else ""
        text = text[len(bom):]
        try:
            data = json.loads(text)
            spans = _source_spans(text)
        except RecursionError:
            raise NotebookError("nested too deeply") from None
        except ValueError as error:
            raise NotebookError(f"invalid JSON: {error}") from None
        if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
            if isinstance(data, dict) and "worksheets" in data:
                raise NotebookError("nbformat 3 notebooks are not supported (upgrade it with `jupyter nbconvert --to notebook`)")
            raise NotebookError("no `cells` list: not an nbformat 4 notebook")
        if not _is_python(data.get("metadata")):
            return cls(text, [], [], bom)
        cells = []
        for index, cell in enumerate(data["cells"]):
            if not isinstance(cell, dict) or cell.get("cell_type") != "code":
                continue
            source = cell.get("source", "")
            as_list = isinstance(source, list)
            if as_list and all(isinstance(line, str) for line in source):
                source = "".join(source)
            if not isinstance(source, str) or spans[index] is None:
                raise NotebookError(f"cell {index + 1}: `source` is not text")
            surrogate = _SURROGATE.search(source)
            if surrogate is not None:
                # JSON's `"\ud800"` escape: no UTF-8 text has it, so no module can be made of it.
                line = source.count("\n", 0, surrogate.start()) + 1
                raise NotebookError(f"cell {index + 1}, line {line}: a lone surrogate "
                                    f"(U+{ord(surrogate.group()):04X}) is not text")
            cells.append(CodeCell(index + 1, source, spans[index], as_list, False))
        return cls(text, cells, [], bom)

    # Positions ----------------------------------------------------------------------------

    def locate(self, line: int) -> tuple[int | None, int]:
        """(cell number, line in the cell) of a module line; (None, line) if it is in no cell."""
        at = bisect.bisect_right(self._first_lines, line) - 1  # a search, not a walk: once per finding
        if at >= 0:
            cell = self.cells[at]
            if cell.first_line <= line < cell.first_line + max(cell.lines, 1):
                return cell.number, line - cell.first_line + 1
        return None, line

    # Writing back ----------------------------------------------------------------------------

    def rebuild(self, fixed_code: str) -> str:
        """The notebook's text with the fixed module's cells in place of the changed ones."""
        pieces = self.markers.cell_line.split(fixed_code)
        # split() gives [cell 1's code, "1", cell 2's code, "2", ..., rest]
        numbers = [int(n) for n in pieces[1::2]]
        if numbers != [cell.number for cell in self.cells] or pieces[-1]:
            raise NotebookError("a fix moved a cell boundary")
        edits = []
        for cell, code in zip(self.cells, pieces[0::2], strict=False):
            code = _unmasked(code, self.masks, self.prefixes, self.markers)
            if cell.added_newline:
                code = code.removesuffix("\n")
            if code == cell.runs_as:
                continue
            if cell.runs_as != cell.source:
                # Which lines IPython would take the indentation from is not known after a fix.
                raise NotebookError(
                    f"cell {cell.number} starts indented (IPython removes that indentation); fix it by hand"
                )
            if code != cell.source:
                start, end = cell.span
                edits.append((start, end, _render_source(code, self.text[start:end], cell.as_list, self.text)))
        # Joined once: a slice per edit would copy the text once per changed cell.
        pieces, last = [self.bom], 0
        for start, end, new in edits:
            pieces += [self.text[last:start], new]
            last = end
        pieces.append(self.text[last:])
        return "".join(pieces)

    def cell_sources(self) -> dict[int, str]:
        return {cell.number: cell.source for cell in self.cells}


def _is_python(metadata) -> bool:
    """Python unless the notebook says another language (an R or Julia kernel)."""
    if not isinstance(metadata, dict):
        return True
    for key, field in (("language_info", "name"), ("kernelspec", "language")):
        value = metadata.get(key)
        if isinstance(value, dict) and isinstance(value.get(field), str):
            return value[field].lower() in ("python", "python3", "ipython", "ipython3")
    return True


def _source_spans(text: str) -> list[tuple[int, int] | None]:
    """Where each cell's ``source`` value is in ``text`` (None for a cell without one), found by
    walking the top-level object and the ``cells`` array; every other value is skipped whole."""
    decoder = json.JSONDecoder()
    scan = json.decoder.scanstring
    spans: list = []

    def skip_ws(position: int) -> int:
        return _WHITESPACE.match(text, position).end()

    def expect(position: int, char: str) -> int:
        if text[position:position + 1] != char:
            raise ValueError(f"expected {char!r} at character {position}")
        return position + 1

    def members(position: int, on_value: Callable[[str, int], int]) -> int:
        position = expect(skip_ws(position), "{")
        position = skip_ws(position)
        if text[position:position + 1] == "}":
            return position + 1
        while True:
            position = expect(skip_ws(position), '"')
            key, position = scan(text, position)
            position = skip_ws(expect(skip_ws(position), ":"))
            position = on_value(key, position)
            position = skip_ws(position)
            if text[position:position + 1] == ",":
                position += 1
                continue
            return expect(position, "}")

    def skip(_key: str, position: int) -> int:
        return decoder.raw_decode(text, position)[1]

    def cell(found: list, position: int) -> int:
        span = [None]

        def value(key: str, start: int) -> int:
            end = skip(key, start)
            if key == "source":
                span[0] = (start, end)
            return end

        if text[position:position + 1] != "{":
            found.append(None)
            return skip("", position)
        end = members(position, value)
        found.append(span[0])
        return end

    def top(key: str, position: int) -> int:
        if key != "cells" or text[position:position + 1] != "[":
            return skip(key, position)
        found: list = []
        position = skip_ws(position + 1)
        if text[position:position + 1] == "]":
            spans[:] = found
            return position + 1
        while True:
            position = skip_ws(cell(found, skip_ws(position)))
            if text[position:position + 1] == ",":
                position += 1
                continue
            spans[:] = found  # the last `cells` key wins, as in json.loads
            return expect(position, "]")

    end = members(0, top)
    if skip_ws(end) != len(text):
        raise ValueError("extra data after the notebook")
    return spans


_INDENT = re.compile(r"[ \t]+")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _without_leading_indent(source: str) -> tuple[str, str, set[int]]:
    """The cell as IPython runs it: its first cleanup (``leading_indent``) removes the first
    line's indentation from every line that starts with it, so a cell pasted with an indent
    runs. (The cell so, that indentation or "", the 0-based lines it was removed from.)"""
    found = _INDENT.match(source)
    if found is None:
        return source, "", set()
    indent = found.group(0)
    lines = _LINES.findall(source)
    dedented = {number for number, line in enumerate(lines) if line.startswith(indent)}
    runs_as = "".join(line[len(indent) :] if number in dedented else line for number, line in enumerate(lines))
    return runs_as, indent, dedented


def _masked(source: str, masks: list[str], prefixes: list[str], markers: _Markers = _PLAIN) -> str:
    """``source`` with each line of IPython syntax replaced by a numbered ``pass``."""
    lines = _LINES.findall(source)
    first = next((line for line in lines if line.strip()), "")
    if first.lstrip().startswith("%%"):
        magic = first.lstrip()[2:].split(None, 1)[0] if first.strip() != "%%" else ""
        if magic not in _PYTHON_CELL_MAGICS:
            # %%bash, %%html, ...: not Python, so no block either (`  echo $f` in a loop).
            return "".join(_mask(line, masks, "", markers) for line in lines)
        index = lines.index(first)
        head = "".join(lines[:index]) + _mask(first, masks, None, markers)
        if magic in _TRANSFORMED_CELL_MAGICS:
            # IPython runs these bodies through its own cleanup first (`%%capture` then
            # `!pip install ...`): their shell escapes and line magics are masked as a plain cell's.
            return head + _masked_lines(lines[index + 1:], masks, prefixes, markers)
        return head + "".join(lines[index + 1:])
    return _masked_lines(lines, masks, prefixes, markers)


def _masked_lines(lines: list[str], masks: list[str], prefixes: list[str], markers: _Markers) -> str:
    out = []
    continued = False
    depth = 0  # open brackets: `% b` inside `(a\n % b)` is Python, not a magic
    for line in lines:
        python_magic = _PYTHON_LINE_MAGIC.match(line) if depth == 0 and not continued else None
        if python_magic and not line.rstrip("\r\n").endswith("\\"):
            body = line.rstrip("\r\n")
            prefixes.append(python_magic.group(2))
            out.append(python_magic.group(1) + body[python_magic.end():] + markers.prefix.format(len(prefixes) - 1)
                       + line[len(body):])
        elif continued or (depth == 0 and _is_magic(line)):
            if not continued:
                indent = line[: len(line) - len(line.lstrip(" \t"))]
            # A continuation line (`!git clone \` then `     https://...`) is part of the magic's
            # statement: masked at its indentation, not its own.
            out.append(_mask(line, masks, indent, markers))
            continued = line.rstrip("\r\n").endswith("\\")
        else:
            out.append(line)
            code = _STRING_OR_COMMENT.sub("", line)
            depth = max(0, depth + sum(code.count(c) for c in "([{") - sum(code.count(c) for c in ")]}"))
    return "".join(out)


# IPython's automagic: a line magic written without its `%` (`timeit -n 5 f()`, `pip install jax`),
# recognised only for these names and only when an option or a word follows, which Python never allows.
_AUTOMAGIC = re.compile(
    r"[ \t]*(?:cd|conda|env|load_ext|ls|matplotlib|pip|prun|pwd|run|time|timeit)[ \t]+"
    r"(?:-[A-Za-z]|[.~]|(?!(?:and|or|not|in|is|if|else|for|lambda|async|await)\b)[A-Za-z_])"
)


def _is_magic(line: str) -> bool:
    stripped = line.strip()
    if not stripped or stripped.startswith("#"):
        return False
    if stripped[0] in "%!?":
        return True
    if _AUTOMAGIC.match(line):
        return True
    if stripped.endswith("?") and "#" not in stripped and "'" not in stripped and '"' not in stripped:
        return True  # `obj?`, `obj??`: help
    return _MAGIC_ASSIGNMENT.match(line) is not None


def _mask(line: str, masks: list[str], indent: str | None = None, markers: _Markers = _PLAIN) -> str:
    """``line`` as a numbered ``pass`` at ``indent`` (default: the line's own); the line itself,
    indentation and all, is what ``_unmasked`` puts back."""
    body = line.rstrip("\r\n")
    ending = line[len(body):]
    if indent is None:
        indent = body[: len(body) - len(body.lstrip(" \t"))]
    masks.append(body)
    return indent + markers.mask.format(len(masks) - 1) + ending


def _unmasked(code: str, masks: list[str], prefixes: list[str], markers: _Markers = _PLAIN) -> str:
    code = markers.prefix_line.sub(lambda m: m.group(1) + prefixes[int(m.group(3))] + m.group(2), code)
    return markers.mask_line.sub(lambda match: masks[int(match.group(2))], code)


def _render_source(code: str, old: str, as_list: bool, text: str) -> str:
    """``code`` as a JSON ``source`` value in the style of ``old``, the value it replaces: a line
    the fix left as it was keeps its very bytes; new lines are escaped as the file escapes."""
    if as_list:
        elements = _elements(old)
        if "".join(value for value, _raw in elements) == code:
            return old
    if not as_list:
        return _dumps(code, _style(text))
    values = [value for value, _raw in elements]
    lines = _LINES.findall(code)
    rendered: list[str] = []
    style = None  # the file's escapes, read once (once per line was quadratic, issue 53)
    # line_opcodes: difflib's matcher is quadratic on repeated lines (issue 53: 30 s for 16,000).
    for tag, i1, i2, j1, j2 in line_opcodes(values, lines):
        if tag == "equal":
            rendered += [raw for _value, raw in elements[i1:i2]]
        else:
            style = style or _style(text)
            rendered += [_dumps(line, style) for line in lines[j1:j2]]
    if not rendered:
        return "[]"
    multiline = re.match(r"\[([ \t]*\r?\n)([ \t]*)", old)
    if multiline is None:
        # The separator the list (else the file) uses: ", " as json.dumps writes, "," when compact.
        separator = re.search(r'"(,[ \t]*)"', old) or re.search(r'"(,[ \t]*)"', text)
        return "[" + (separator.group(1) if separator else ", ").join(rendered) + "]"
    newline = "\r\n" if "\r\n" in multiline.group(1) else "\n"
    close = re.search(r"\n([ \t]*)\]\Z", old)
    closing = close.group(1) if close else ""
    indent = multiline.group(2)
    return "[" + newline + ("," + newline).join(indent + line for line in rendered) + newline + closing + "]"


def _elements(old: str) -> list[tuple[str, str]]:
    """(value, raw text) of each string of the JSON list ``old``."""
    decoder = json.JSONDecoder()
    found = []
    position = _WHITESPACE.match(old, 1).end()
    while old[position:position + 1] not in ("]", ""):
        value, end = decoder.raw_decode(old, position)
        found.append((value, old[position:end]))
        position = _WHITESPACE.match(old, end).end()
        if old[position:position + 1] == ",":
            position = _WHITESPACE.match(old, position + 1).end()
    return found


@lru_cache(maxsize=4)  # once per notebook, not once per changed cell (the same text object)
def _style(text: str) -> tuple[bool, tuple[tuple[str, str], ...]]:
    """How the file writes a JSON string: ASCII escapes or raw non-ASCII, and which of ``&``,
    ``<``, ``>`` it escapes (as Colab and Go's encoder write them)."""
    ascii_only = text.isascii() and "\\u" in text
    return ascii_only, tuple((char, escape) for char, escape in (("&", "\\u0026"), ("<", "\\u003c"), (">", "\\u003e"))
                             if escape in text)


def _dumps(value: str, style: tuple[bool, tuple[tuple[str, str], ...]]) -> str:
    """A JSON string in the file's ``style`` (``_style``)."""
    ascii_only, escapes = style
    dumped = json.dumps(value, ensure_ascii=ascii_only)
    for char, escape in escapes:
        dumped = dumped.replace(char, escape)
    return dumped


# The engine's entry points ---------------------------------------------------------------------


def prefilter_code(raw: bytes) -> bytes | None:
    """The module the rules would see, for their prefilters; None if it is no readable notebook
    (then every rule is asked, and the check reports why)."""
    try:
        return Notebook.parse(raw).code.encode("utf-8")
    except NotebookError:
        return None


def process_notebook(
    source: bytes, path: str, settings, process_code, bounded: Callable[[], AbstractContextManager] = nullcontext
) -> FileResult:
    """``process_source`` for a notebook: ``process_code(code, path, settings)`` checks its module.
    ``bounded()``: the budget the reading and the writing back each run in (the engine's per-file one)."""
    from jax_codemod.engine.results import FileError, FileResult
    from jax_codemod.rule import FixSafety

    result = FileResult(path=path, source=source)
    try:
        with bounded():
            notebook = Notebook.parse(source)
    except NotebookError as error:
        result.error = FileError(path, f"cannot read as a notebook: {error}")
        return result
    if not notebook.cells:
        return result
    inner = process_code(notebook.code.encode("utf-8"), path, settings)
    result.findings = [_in_cell(notebook, finding) for finding in inner.findings]
    if inner.error is not None:
        cell, line = notebook.locate(inner.error.line) if inner.error.line else (None, inner.error.line)
        # The module's own line (the parser may have read the line of that number from the file).
        lines = _LINES.findall(notebook.code)
        shown = (_unmasked(lines[inner.error.line - 1], notebook.masks, notebook.prefixes, notebook.markers)
                 .rstrip("\r\n")
                 if inner.error.source_line is not None and inner.error.line and inner.error.line <= len(lines)
                 else inner.error.source_line)
        result.error = replace(inner.error, line=line, cell=cell, source_line=shown)
    if inner.changed and inner.error is None:
        try:
            fixed = inner.fixed.decode("utf-8")
            with bounded():
                restored = _check_masks(fixed, notebook)
                result.fixed = notebook.rebuild(restored).encode("utf-8")
        except (NotebookError, UnicodeDecodeError) as error:
            result.findings = [replace(f, applied=False, resolved_by=None,
                                       fix=FixSafety.NONE if f.fix is not FixSafety.NONE else f.fix)
                               for f in result.findings]
            result.error = FileError(path, f"fix not applied: {error}")
    return result


def _check_masks(fixed: str, notebook: Notebook) -> str:
    """The fixed module with its masks intact (each exactly once, in order), else NotebookError."""
    markers = notebook.markers
    numbers = [int(match.group(2)) for match in markers.mask_line.finditer(fixed)]
    magics = [int(match.group(3)) for match in markers.prefix_line.finditer(fixed)]
    if numbers != list(range(len(notebook.masks))) or magics != list(range(len(notebook.prefixes))):
        raise NotebookError("a fix moved an IPython magic or shell escape")
    return fixed


def _in_cell(notebook: Notebook, finding):
    cell, line = notebook.locate(finding.line)
    if cell is None:
        return finding
    shift = line - finding.line
    span = finding.span
    columns = notebook.shifts.get(finding.line, 0)  # the line magic before the statement
    moved = replace(span, start_line=span.start_line + shift, end_line=span.end_line + shift,
                    start_column=span.start_column + columns,
                    end_column=span.end_column + (columns if span.end_line == span.start_line else 0))
    return replace(finding, line=line, column=finding.column + columns, span=moved, cell=cell,
                   message=_cell_lines(notebook, finding.message))


# "line N" in a message is a line of the module the rules read; "`x.ipynb` line N" too. Another
# module a message names ("`pkg/io.py` line 12") is a .py file, whose lines are its own.
_MESSAGE_LINE = re.compile(r"(`[^`\n]*` )?\bline (\d+)\b")


def _cell_lines(notebook: Notebook, message: str) -> str:
    """``message`` with each of the notebook's module lines it cites as the cell and the line in
    it (``cell 3, line 2``), as the finding's own location is."""
    def in_cell(match: re.Match) -> str:
        named = match.group(1)
        if named and not named.endswith(".ipynb` "):
            return match.group(0)
        cell, line = notebook.locate(int(match.group(2)))
        return match.group(0) if cell is None else f"{named or ''}cell {cell}, line {line}"

    return _MESSAGE_LINE.sub(in_cell, message)


def cell_diffs(path: str, before: bytes, after: bytes) -> list[tuple[int, str]]:
    """(cell number, unified diff) of each code cell a fix changed, as ruff shows a notebook's diff."""
    old, new = Notebook.parse(before).cell_sources(), Notebook.parse(after).cell_sources()
    diffs = []
    for number, source in old.items():
        changed = new.get(number, source)
        if changed != source:
            name = f"{path}:cell {number}"
            lines = difflib.unified_diff(
                _LINES.findall(source), _LINES.findall(changed), f"a/{name}", f"b/{name}")
            diffs.append((number, "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of cell\n"
                                          for line in lines)))
    return diffs
