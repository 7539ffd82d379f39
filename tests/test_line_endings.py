"""Lines are what Python's tokenizer says they are, whatever ends them.

Only CRLF, CR and LF end a line for the parser; a form feed, U+000B-U+001E, U+0085 or U+2028
is an ordinary character inside a line. Every snapshot input of the project is re-run under
each variant below: the findings must be the same (line numbers shifted by a prefix line), and
so must the fix, modulo line endings, with the file's own endings kept (a final CR too).
"""

from __future__ import annotations

import re

import pytest
from cases import all_cases, fix
from jax_codemod.analysis.context import FileContext, count_line_breaks, split_lines

CASES = [case for case in all_cases() if case.kind in ("rewrite", "unsafe", "report")]
# Characters str.splitlines() splits at but the tokenizer does not, in a comment line: the
# prefix adds exactly one line for Python.
ODD = "\x0c\x0b\x1c\x1d\x1e\x85\u2028\u2029"
PREFIX = f"# odd characters: {ODD} end\n".encode()


def _lines(data: bytes) -> list[bytes]:
    return re.findall(rb"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z", data)


def _mixed(data: bytes) -> bytes:
    # A CR is always followed by a CRLF, so that no CR and a following empty line's LF merge.
    endings = (b"\r\n", b"\n", b"\r")
    return b"".join(
        line.rstrip(b"\r\n") + (endings[number % 3] if line.endswith((b"\n", b"\r")) else b"")
        for number, line in enumerate(_lines(data))
    )


VARIANTS = {
    "crlf": lambda data: data.replace(b"\n", b"\r\n"),
    "cr_only": lambda data: data.replace(b"\n", b"\r"),
    "mixed": _mixed,
    "odd_prefix": lambda data: PREFIX + data,
    "odd_prefix_cr_only": lambda data: (PREFIX + data).replace(b"\n", b"\r"),
}


def _normal(data: bytes | None) -> bytes | None:
    return None if data is None else re.sub(rb"\r\n?", b"\n", data)


def _shape(result, shift: int):
    # A message may name another line ("line 24 passes it a capsule"): it moves with the prefix too.
    def message(text: str) -> str:
        return re.sub(r"\bline (\d+)", lambda m: f"line {int(m.group(1)) - shift}", text)

    return sorted(
        (f.code, f.line - shift, f.column, f.span.end_line - shift, f.span.end_column, message(f.message), f.applied)
        for f in result.findings
    )


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_findings_and_fixes_do_not_depend_on_line_endings(case, variant):
    if b"\r" in case.source:
        pytest.skip("the case is about line endings itself")
    source = VARIANTS[variant](case.source)
    shift = 1 if variant.startswith("odd_prefix") else 0
    expected, actual = fix(case), fix(case, source)
    assert (actual.error is None) == (expected.error is None), actual.error
    assert _shape(actual, shift) == _shape(expected, 0)
    assert actual.findings, "every rewrite/report case has findings"
    if expected.fixed is None:
        assert actual.fixed is None
        return
    prefix = _normal(PREFIX) if shift else b""
    assert _normal(actual.fixed) == prefix + _normal(expected.fixed)
    if variant in ("crlf", "cr_only", "odd_prefix_cr_only"):
        ending = b"\r\n" if variant == "crlf" else b"\r"
        assert _normal(actual.fixed).count(b"\n") == actual.fixed.count(ending), "the file's own endings are kept"
    assert actual.fixed.endswith(source[-1:]) or not source.endswith((b"\n", b"\r"))


def test_line_primitive_agrees_with_the_tokenizer():
    text = "a = 1\r\nb = 2\rc = 3 # \x0c\u2028\x85\x0b\x1e\nd = (\r\n  4)\re = 5"
    import ast

    tree = ast.parse(text)
    names = {node.id: node.lineno for node in ast.walk(tree) if isinstance(node, ast.Name)}
    lines = split_lines(text)
    assert len(lines) == 6 == max(names.values())
    for name, lineno in names.items():
        assert lines[lineno - 1].lstrip("( ").startswith(name)
        assert 1 + count_line_breaks(text, 0, text.index(f"{name} =")) == lineno
    assert "".join(lines) == text
    assert FileContext("x.py", text, tree).lines == lines


MARK = "  #\x0c\x0b\x1c\x85\u2028 odd"


def _commented(data: bytes) -> bytes:
    """A comment of odd characters at the end of every logical line (after the statement)."""
    import io
    import tokenize

    text = data.decode("utf-8")
    ends = set()
    commented = set()
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT:
            commented.add(token.start[0])
        if token.type == tokenize.NEWLINE and token.string:
            ends.add(token.start[0])
    lines = split_lines(text)
    out = []
    for number, line in enumerate(lines, 1):
        body = line.rstrip("\r\n")
        if number in ends and number not in commented and not body.rstrip().endswith("\\"):
            line = body + MARK + line[len(body):]
        out.append(line)
    return "".join(out).encode("utf-8")


# Cases whose fix deliberately takes another shape when a comment sits on a line it would delete.
COMMENT_SHAPES_FIX = {
    "removed_dlpack_api-rewrite_capsule_variable": "JAX005 never deletes a line with a comment: the "
    "capsule variable is kept and made to hold the array instead",
    "removed_dlpack_api-rewrite_jax_capsule_variable": "as above, for a torch capsule handed to JAX",
    "removed_dlpack_api-rewrite_rebound_name_into_jax": "as above, for a name rebound to its capsule",
    "removed_dlpack_api-rewrite_rebound_name_to_torch": "as above, JAX to torch",
    "removed_dlpack_api-rewrite_capsule_freed_with_del": "as above, for the variable a later rebinding overwrites",
    "removed_dlpack_api-rewrite_fallback_chain_handlers": "as above, for the capsule in the fallback handler",
}


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_odd_characters_inside_lines_change_nothing(case):
    source = _commented(case.source)
    expected, actual = fix(case), fix(case, source)
    assert (actual.error is None) == (expected.error is None), actual.error
    shape = [item[:5] + item[6:] for item in _shape(actual, 0)]  # messages may quote source
    assert shape == [item[:5] + item[6:] for item in _shape(expected, 0)]
    if expected.fixed is not None and case.id not in COMMENT_SHAPES_FIX:
        assert re.sub(re.escape(MARK).encode(), b"", actual.fixed) == expected.fixed
    elif expected.fixed is not None:
        assert actual.fixed is not None and actual.fixed != source
