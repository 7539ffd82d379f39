"""The combined prefilter (``rule.Prefilter``) answers exactly as the rules' own prefilters do.

The engine asks ``Prefilter.active`` once per file instead of each rule's ``prefilter``; a
rule it left out would never see the file, so any difference loses findings.
"""

from __future__ import annotations

from pathlib import Path

import jax_codemod
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax_codemod.engine.pipeline import active_rules
from jax_codemod.registry import MANIFEST, LazyRule
from jax_codemod.rule import SMALL_FILE, Prefilter, Rule, minimal_triggers

REPO = Path(__file__).resolve().parent.parent


class Plain(Rule):
    CODE, NAME, TRIGGERS = "TST001", "plain", (b"needle", b"needle_eye", b"pin")


class Refined(Rule):
    CODE, NAME, TRIGGERS = "TST002", "refined", (b"pin",)

    def prefilter(self, source: bytes) -> bool:
        return b"pin" in source and b"cushion" in source


class Ungated(Rule):
    """No triggers, its own prefilter: the gate must not hide files from it."""

    CODE, NAME = "TST003", "ungated"

    def prefilter(self, source: bytes) -> bool:
        return source.startswith(b"#!")


class Required(Rule):
    """The default prefilter with REQUIRES: every one of them and a trigger."""

    CODE, NAME, TRIGGERS, REQUIRES = "TST004", "required", (b"needle", b"pin"), (b"cushion", b"jax")


class RequiredRefined(Rule):
    """REQUIRES with a prefilter of its own, which the requirement holds of."""

    CODE, NAME, TRIGGERS, REQUIRES = "TST005", "required-refined", (b"pin",), (b"jax",)

    def prefilter(self, source: bytes) -> bool:
        return b"jax" in source and b"pin" in source and b"x." in source


TRIGGERS = sorted({t for info in MANIFEST for t in info.TRIGGERS} | {b"needle_eye", b"pin", b"cushion", b"jax"})
PIECES = st.one_of(st.sampled_from([*TRIGGERS, b"#!", b" ", b"\n", b"jit", b"vmap(", b"x."]), st.binary(max_size=8))


def every_rule_set():
    lazy = tuple(LazyRule(info, {}) for info in MANIFEST)
    loaded = tuple(rule() for rule in jax_codemod.RULES)
    return [
        lazy, loaded, (Plain(), Refined()), (Plain(), Ungated(), Refined()), (*lazy[:2], Refined()), (),
        # What every rule requires is asked first; what only some require, per rule.
        (Required(), RequiredRefined()), (Required(), Plain()), (*lazy, Required()), (Ungated(), RequiredRefined()),
    ]


@settings(max_examples=300, deadline=None)
@given(st.lists(PIECES, max_size=16))
def test_active_is_every_rule_whose_prefilter_passes(pieces):
    small = b"".join(pieces)
    # Both ways the gate is asked: one regex for a small file, ``in`` scans for a large one.
    for source in (small, small + b" " * SMALL_FILE, b"#" * SMALL_FILE + small):
        for rules in every_rule_set():
            expected = tuple(rule for rule in rules if rule.prefilter(source))
            assert Prefilter(rules).active(source) == expected
            assert active_rules(source, rules) == expected


@pytest.mark.parametrize("info", MANIFEST, ids=lambda info: info.CODE)
def test_each_trigger_alone_passes_its_rule(info):
    rules = tuple(LazyRule(i, {}) for i in MANIFEST)
    for trigger in info.TRIGGERS:
        source = b"import jax\n@jax.jit\ndef f(x):\n    return " + trigger + b"\n"
        active = {rule.CODE for rule in Prefilter(rules).active(source)}
        assert active == {rule.CODE for rule in rules if rule.prefilter(source)}


def test_a_file_without_any_trigger_asks_no_rule(monkeypatch):
    asked = []
    monkeypatch.setattr(LazyRule, "_refine", lambda self, source: asked.append(self.CODE) or True)
    rules = tuple(LazyRule(info, {}) for info in MANIFEST)
    assert Prefilter(rules).active(b"import os\nprint(os.sep)\n") == ()
    assert asked == []  # no rule imported, no rule's own prefilter run
    # Every rule REQUIRES `jax`: a file with triggers but without it asks none either.
    assert Prefilter(rules).active(b"y = x.toDlpack()\n") == ()
    assert asked == []
    assert [r.CODE for r in Prefilter(rules).active(b"import jax\ny = x.toDlpack()\n")] == ["JAX005"]
    assert asked == ["JAX005"]


def test_minimal_triggers_drop_those_that_contain_another():
    assert minimal_triggers([b"from_dlpack", b"dlpack", b"to_dlpack", b"dl_device", b"dlpack"]) == (b"dlpack", b"dl_device")
    assert minimal_triggers([]) == ()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(PIECES, max_size=16), min_size=1, max_size=120))
def test_one_prefilter_asked_file_after_file_keeps_answering_exactly(files):
    """The gate's scan order adapts to the triggers the files hold; its answers never change."""
    rules = tuple(LazyRule(info, {}) for info in MANIFEST)
    prefilter = Prefilter(rules)
    for pieces in files:
        source = b"#" * SMALL_FILE + b"".join(pieces)  # large enough for the scanned gate
        assert prefilter.active(source) == tuple(rule for rule in rules if rule.prefilter(source))
    assert sorted(prefilter._order) == sorted(prefilter.gate)


def test_the_gate_order_follows_the_hits():
    from jax_codemod.rule import RESORT_EVERY

    rules = tuple(LazyRule(info, {}) for info in MANIFEST)
    prefilter = Prefilter(rules)
    rare = prefilter.gate[-1]
    for _ in range(RESORT_EVERY):
        prefilter.active(b"import jax\n" + b"#" * SMALL_FILE + rare)  # every rule REQUIRES jax
    assert prefilter._order[0] == rare and sorted(prefilter._order) == sorted(prefilter.gate)


def _without(source: bytes, required: bytes) -> bytes:
    while required in source:
        source = source.replace(required, required[:-1])
    return source


RULE_CLASSES = [*jax_codemod.RULES, Required, RequiredRefined]


@pytest.mark.parametrize("cls", RULE_CLASSES, ids=lambda cls: cls.CODE)
def test_requires_is_what_the_prefilter_needs_on_the_project_files(cls):
    """REQUIRES is a promise about ``prefilter``: ``Prefilter`` rejects a file for a rule
    without asking it when a required string is absent, so the rule itself must say no too."""
    # A TPU target: the platform rules (JAX004, JAX008) pass nothing for the default CPU/GPU target.
    rule, checked = cls({"target-platforms": "cpu,tpu"}), 0
    for path in sorted((REPO / "tests").rglob("*.py")) + sorted((REPO / "examples").rglob("*.py")):
        source = path.read_bytes()
        if rule.prefilter(source):
            assert all(required in source for required in rule.REQUIRES)
            checked += 1
        for required in rule.REQUIRES:
            assert not rule.prefilter(_without(source, required)), (path, required)
    assert checked or not rule.TRIGGERS


@settings(max_examples=300, deadline=None)
@given(st.lists(PIECES, max_size=16))
def test_requires_is_what_the_prefilter_needs(pieces):
    source = b"".join(pieces)
    for cls in RULE_CLASSES:
        rule = cls()
        for required in rule.REQUIRES:
            assert not rule.prefilter(_without(source, required))
            assert not rule.prefilter(_without(source + b"import jax\n" + b"".join(rule.TRIGGERS), required))


def test_the_dlpack_rules_prefilters_are_their_specification():
    """Their prefilters became the default one (REQUIRES, then TRIGGERS); what they were."""
    specified = {
        # A multi-device array is JAX's; one a file that names no jax gets from another module
        # of its project is the project gate's question (test_projects).
        # torch 2.x's `as_tensor` and `tensor` read a JAX array through DLPack (issue 54).
        "JAX002": lambda s: b"jax" in s and any(t in s for t in (b"dlpack", b"unsafe_buffer_pointer", b"__cuda_array_interface__", b"torch.as_tensor", b"torch.tensor(")),
        # Any JAX array (issue 34): one from another module of the project needs an import only.
        "JAX006": lambda s: b"import" in s and any(t in s for t in (b"dlpack", b"unsafe_buffer_pointer", b"__cuda_array_interface__", b"torch.as_tensor", b"torch.tensor(")),
        "JAX003": lambda s: b"dl_device" in s and b"jax" in s,
        "JAX005": lambda s: b"jax" in s and (b"to_dlpack" in s or b"toDlpack" in s or b"from_dlpack" in s),
    }
    rules = {cls.CODE: cls() for cls in jax_codemod.RULES}
    lazy = {info.CODE: LazyRule(info, {}) for info in MANIFEST}
    texts = [b"", b"jax", b"import jax\n", *TRIGGERS, *(b"jax " + t for t in TRIGGERS), *(t + b"jax" for t in TRIGGERS)]
    texts += [path.read_bytes() for path in sorted((REPO / "tests" / "snapshots").rglob("*.py"))]
    for code, spec in specified.items():
        for text in texts:
            assert rules[code].prefilter(text) == spec(text) == lazy[code].prefilter(text), (code, text[:80])


# Characters NFKC changes or composes: fullwidth letters, a ligature, a no-break space, a
# superscript, a combining acute that composes with the ASCII letter before it, and `é`.
_NFKC_PIECES = st.sampled_from(["ｊ", "ａ", "ｘ", "ﬁ", "\u00a0", "²", "\u0301", "é", "e", "j", "a", "x", "i", ".", " ", "\n"])


@settings(max_examples=500, deadline=None)
@given(text=st.lists(_NFKC_PIECES, max_size=30).map("".join))
def test_the_prefilter_reads_every_ascii_run_the_whole_texts_nfkc_holds(text):
    """Every ASCII run of the whole text's NFKC (where a trigger is spelled) is in what
    ``_as_python_reads`` gives: no file that spells a trigger with compatibility characters
    is left out, however the normalisation is shortened."""
    import re
    import unicodedata

    from jax_codemod.engine.pipeline import _as_python_reads

    seen = _as_python_reads(text.encode("utf-8")).decode("utf-8")
    for run in re.findall(r"[\x00-\x7f]+", unicodedata.normalize("NFKC", text)):
        assert run in seen
