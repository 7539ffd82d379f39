"""The rule registry and the documentation generated from it."""

from __future__ import annotations

import re

import jax_codemod
from jax_codemod import docs
from jax_codemod.rule import FixSafety, Rule


def test_codes_and_names_are_unique_and_well_formed():
    codes = [rule.CODE for rule in jax_codemod.RULES]
    names = [rule.NAME for rule in jax_codemod.RULES]
    assert len(set(codes)) == len(codes)
    assert len(set(names)) == len(names)
    for rule in jax_codemod.RULES:
        assert re.fullmatch(r"JAX\d{3}", rule.CODE), rule.CODE
        assert re.fullmatch(r"[a-z]+(-[a-z]+)+", rule.NAME), rule.NAME
        assert issubclass(rule, Rule)
        assert isinstance(rule.FIX_SAFETY, FixSafety)
        assert rule.TRIGGERS, f"{rule.CODE} needs a byte prefilter"


def test_registry_is_sorted_by_code():
    codes = [rule.CODE for rule in jax_codemod.RULES]
    assert codes == sorted(codes)


def test_every_rule_is_documented_in_ruff_sections():
    for rule in jax_codemod.RULES:
        found = docs.sections(rule)
        assert tuple(found) == docs.SECTIONS, f"{rule.CODE}: sections {tuple(found)}"
        assert all(found.values()), f"{rule.CODE}: empty section"
        assert "```python" in found["Example"] and "```python" in found["Use instead"]


def test_one_module_per_rule_named_after_the_anti_pattern():
    modules = [rule.__module__ for rule in jax_codemod.RULES]
    assert len(set(modules)) == len(modules)
    for rule in jax_codemod.RULES:
        assert rule.__module__ == "jax_codemod.rules." + rule.NAME.replace("-", "_"), rule.__module__


def test_readme_rule_table_is_current():
    current = docs.README.read_text(encoding="utf-8")
    assert docs.render_readme(current, jax_codemod.RULES) == current, "run: python -m jax_codemod.docs"


def test_explain_carries_every_section():
    for rule in jax_codemod.RULES:
        text = docs.explain(rule)
        for heading in docs.SECTIONS:
            assert f"## {heading}" in text
