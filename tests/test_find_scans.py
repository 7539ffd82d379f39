"""The text scans that find a name's or an alias's spellings with ``str.find`` (issue 55: a
pattern compiled per name cost ~5% of a run on trees other than JAX's) find what the per-name
patterns they replace find, in the same order, whichever way a text is scanned."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st
from jax_codemod.analysis import module_text, names

PIECES = ["x", "xs", "x1", "_x", "jnp", "np", ".", " ", "\t", "\n", "(", "é", "²", "a.b", ". c", "x.y.z", "#", "__"]
texts = st.lists(st.sampled_from(PIECES), max_size=60).map("".join)
words = st.sampled_from(["x", "np", "jnp", "a", "x.y", "_x", "é"])


def old_name_lines(text: str, name: str) -> list[int]:
    lines, line, counted = [], 1, 0
    spelled = re.escape(name)
    for match in re.finditer(rf"{spelled}(?![A-Za-z0-9_])(?<![A-Za-z0-9_]{spelled})", text):
        line += text.count("\n", counted, match.start())
        counted = match.start()
        if not lines or lines[-1] != line:
            lines.append(line)
    return lines


@settings(max_examples=600, deadline=None)
@given(texts, words, st.booleans())
def test_name_lines_finds_what_the_names_own_pattern_finds(text, name, crowded):
    if crowded:  # past the count where the pattern is used again
        text = (text + " ") * (names._FOUND_BY_FIND // max(1, text.count(name)) + 1) if name in text else text
    assert names.name_lines(text, name) == old_name_lines(text, name)
    spelled = re.escape(name)
    assert list(names._whole_word_starts(text, name)) == [
        m.start() for m in re.finditer(rf"{spelled}(?![A-Za-z0-9_])(?<![A-Za-z0-9_]{spelled})", text)]


@settings(max_examples=600, deadline=None)
@given(texts, words)
def test_chains_after_an_alias_are_what_the_alias_pattern_finds(text, alias):
    assert list(module_text._chains_found(text, alias)) == module_text._chain_after(alias).findall(text)
