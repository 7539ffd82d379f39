"""Properties of the engine on generated input.

Whatever it is given, ``process_source`` returns (never raises); a changed file parses
with both ast and libcst; fixing the fixed output again changes nothing; a file without
findings is byte-identical. Generated programs rarely contain a rule's trigger, so a
fixable JAX005 pattern is spliced into them to exercise the fix path too.
"""

from __future__ import annotations

import ast

import hypothesmith
import jax_codemod
import libcst as cst
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from jax_codemod.engine.pipeline import Settings, process_source

# hypothesmith compiles what it generates; its SyntaxWarnings are about generated code.
pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning")

ALL_RULES = Settings(rules=tuple(rule() for rule in jax_codemod.RULES), unsafe_fixes=True)
FIXABLE = "import jax.dlpack\nimport torch\n_t = torch.from_dlpack(jax.dlpack.to_dlpack(_x))\n"
FEW = settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)


def _assert_properties(source: bytes) -> None:
    result = process_source(source, "generated.py", ALL_RULES)  # must not raise
    event("error" if result.error else "changed" if result.changed else "findings" if result.findings else "clean")
    if result.error is not None:
        assert not result.changed or result.error.message.startswith("fix not applied")
        return
    if not result.findings:
        assert not result.changed
        return
    if not result.changed:
        return
    ast.parse(result.fixed)
    cst.parse_module(result.fixed)
    again = process_source(result.fixed, "generated.py", ALL_RULES)
    assert again.error is None
    assert not again.changed, "a second run must be a no-op"
    assert not any(ALL_RULES.applies(f) for f in again.findings)


def _splice(program: str, line_index: int) -> str:
    """``program`` with the fixable pattern inserted between two top-level lines."""
    lines = program.splitlines(keepends=True)
    top_level = [i for i, line in enumerate(lines) if line[:1] not in (" ", "\t", "") and not line.startswith("#")]
    at = top_level[line_index % len(top_level)] if top_level else len(lines)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += "\n"
    return "".join(lines[:at]) + FIXABLE + "".join(lines[at:])


@FEW
@given(hypothesmith.from_grammar())
def test_generated_programs_without_trigger_are_untouched(program):
    source = program.encode("utf-8", "surrogatepass")
    result = process_source(source, "generated.py", ALL_RULES)
    if not any(rule.prefilter(source) for rule in ALL_RULES.rules):
        assert (result.findings, result.error, result.changed) == ([], None, False)
    _assert_properties(source)


@FEW
@given(hypothesmith.from_grammar(), st.integers(min_value=0))
def test_generated_programs_with_a_fixable_pattern(program, line_index):
    spliced = _splice(program, line_index)
    _assert_properties(spliced.encode("utf-8", "surrogatepass"))


@FEW
@given(hypothesmith.from_node(), st.integers(min_value=0))
def test_libcst_generated_programs_with_a_fixable_pattern(program, line_index):
    _assert_properties(_splice(program, line_index).encode("utf-8", "surrogatepass"))


TRIGGER_BYTES = sorted({trigger for rule in jax_codemod.RULES for trigger in rule.TRIGGERS})
FRAGMENTS = st.sampled_from(
    [
        FIXABLE.encode(),
        b"jax.dlpack.to_dlpack(",
        b")",
        b"\n",
        b"\r\n",
        b"\t",
        b"    ",
        b"def f(x):\n",
        b"\xef\xbb\xbf",
        b"# -*- coding: latin-1 -*-\n",
        b"\x00",
        b"\xff",
        b'"""',
        b"\\\n",
        *TRIGGER_BYTES,
    ]
)


@FEW
@given(st.lists(st.one_of(FRAGMENTS, st.binary(max_size=20)), max_size=12))
def test_arbitrary_bytes_with_triggers_never_crash(pieces):
    _assert_properties(b"".join(pieces))


@FEW
@given(st.text(max_size=200), st.sampled_from(TRIGGER_BYTES))
def test_arbitrary_text_with_a_trigger_never_crashes(text, trigger):
    _assert_properties(text.encode("utf-8", "surrogatepass") + trigger)
