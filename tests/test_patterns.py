"""The fast regex pieces (``analysis/patterns.py``) match what their plain spellings match.

Each text scan built from them (JAX001's prefilter and access lines, the partial reading's
dotted names, the transform-name test) decides which files and blocks are read at all: a piece
that matched less would hide a finding, one that matched more or elsewhere would move it. The
scans are compared here with the plain patterns they replaced, on texts made of the very words
and separators where the two could part (a word that begins another, spaces, comments and
backslashes between a dot and a name), and on the real scans' own tables.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from jax_codemod.analysis import transforms
from jax_codemod.analysis.patterns import POSSESSIVE, alternation, starts_of
from jax_codemod.rules import _access_text as access_text
from jax_codemod.rules import traced_concrete_access as jax001

WORDS = ["device", "devices", "dev", "item", "items", "is_ready", "is_deleted", "i", "_x", "x_"]
PIECES = st.sampled_from([*WORDS, ".", " ", "\t", "\n", "(", ")", "#c\n", "\\\n", "a", "_", "jnp.", "x"])
TEXTS = st.lists(PIECES, max_size=40).map("".join)


def spans(pattern: re.Pattern[str], text: str) -> list[tuple]:
    return [(m.span(), m.groups(), m.lastgroup) for m in pattern.finditer(text)]


def test_alternation_factors_common_prefixes():
    assert alternation(["device", "devices"]) == "device(?:s)?"
    assert alternation(["is_ready", "is_deleted", "item"]) == "i(?:s_(?:deleted|ready)|tem)"
    assert alternation([]) == "(?!)"
    assert starts_of(["item", "device", "_x"]) == "(?=[_di])"


@pytest.mark.parametrize("after", [r"(?!\w)", r"\b", r"\s*\(", r"[ \t]*[(#]"])
@settings(max_examples=300, deadline=None)
@given(text=TEXTS, words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=6))
def test_alternation_matches_the_plain_one_before_a_non_word(after, text, words):
    plain = re.compile("(?:" + "|".join(words) + ")" + after)
    fast = re.compile(starts_of(words) + alternation(words) + after)
    assert spans(fast, text) == spans(plain, text)


@settings(max_examples=300, deadline=None)
@given(text=TEXTS)
def test_the_possessive_gap_matches_the_plain_one_before_a_name(text):
    gap, plain_gap = rf"(?:\s|\\)*{POSSESSIVE}", r"(?:\s|\\)*"
    commented = rf"{gap}(?:#[^\n]*{POSSESSIVE}\n{gap})*{POSSESSIVE}"
    plain_commented = rf"{plain_gap}(?:#[^\n]*\n{plain_gap})*"
    names = "|".join(WORDS)
    fast = re.compile(rf"\.{commented}(?:{alternation(WORDS)})(?!\w)")
    plain = re.compile(rf"\.{plain_commented}(?:{names})(?!\w)")
    assert spans(fast, text) == spans(plain, text)


def _plain_dotted_families(text_scans: access_text.AccessText) -> re.Pattern[str]:
    """``_dotted_families`` as it was spelled before the pieces: plain repeats and lists."""
    gap = r"(?:\s|\\)*"
    commented = rf"{gap}(?:#[^\n]*\n{gap})*"
    methods, properties = "|".join(text_scans.method_names), "|".join(text_scans.property_names)
    consumers = "|".join(text_scans.consumer_names)
    transforms_ = "|".join(sorted(transforms.TRANSFORM_LEAVES - {"partial"}))
    after_dot = rf"(?:{methods}){gap}[(#]|(?:{properties})(?!\w)(?!{gap}\()"
    return re.compile(
        rf"\.{commented}(?:(?P<access>{after_dot})|(?P<consumer>{consumers}){gap}[(#]|(?P<transform>{transforms_})(?!\w))"
    )


TABLE_WORDS = [
    *jax001.TEXT.method_names,
    *jax001.TEXT.property_names,
    *jax001.TEXT.consumer_names,
    *sorted(transforms.TRANSFORM_LEAVES),
]
TABLE_PIECES = st.sampled_from([*TABLE_WORDS, *(w[:-1] for w in TABLE_WORDS), ".", " ", "\n", "(", "#c\n", "\\\n", "x", "s", "jax", "jnp."])
TABLE_TEXTS = st.lists(TABLE_PIECES, max_size=30).map("".join)


@settings(max_examples=500, deadline=None)
@given(text=TABLE_TEXTS)
def test_the_access_scans_match_their_plain_spellings(text):
    scans = jax001.TEXT
    assert spans(scans._dotted_families, text) == spans(_plain_dotted_families(scans), text)
    plain_leaf = re.compile(r"\b(?:" + "|".join(sorted(transforms.TRANSFORM_LEAVES)) + r")\b")
    assert spans(transforms._leaf_word(), text) == spans(plain_leaf, text)
    methods, properties = "|".join(scans.method_names), "|".join(scans.property_names)
    plain_members = re.compile(rb"\.\s*(?:(?:" + methods.encode() + rb")\s*\(|(" + properties.encode() + rb")\b)")
    data = text.encode()
    assert spans(scans._member_bytes, data) == spans(plain_members, data)
    plain_member_text = re.compile(rf"\.[ \t]*(?:({methods})(?!\w)[ \t]*\(|({properties})(?!\w))")
    assert spans(scans._member_text, text) == spans(plain_member_text, text)


HEADER_PIECES = st.sampled_from(
    ["def", "async", "class", "else", "elif", "@", "x", "data", "_", "1", " ", "\t", "=", "==", "[", "]", "(", ")",
     ":", ".", '"', "'", "r", "f", "dict", "{", "\n", "jax.jit", "import"]
)


@settings(max_examples=500, deadline=None)
@given(text=st.lists(HEADER_PIECES, max_size=25).map("".join))
@example(text="x[1] = [2]\ndata['a'] = dict(b=1)\nx = f(1)\nf(x)\nx: int\nasync  def g(): pass\nelse:\n'doc'\n")
def test_the_header_pattern_matches_its_plain_spelling_at_every_line_start(text):
    from jax_codemod.analysis import blocks

    plain = re.compile(blocks._HEADER.pattern.replace("++", "+").replace("*+", "*"))
    for start in [0, *(i + 1 for i, char in enumerate(text) if char == "\n")]:
        fast, slow = blocks._HEADER.match(text, start), plain.match(text, start)
        assert (fast and (fast.span(), fast.groups())) == (slow and (slow.span(), slow.groups()))
