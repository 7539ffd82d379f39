"""``PartialReceivers`` given a reading's cut of the text takes the strings that cut read
(``Cut.interiors``) instead of reading them again: its answers are those it gives reading them
itself, on real files (every name an import binds)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from jax_codemod.analysis.blocks import string_interiors
from jax_codemod.analysis.partial import Cut
from jax_codemod.analysis.partial_receivers import PartialReceivers

TESTS = Path(__file__).parent
SOURCES = sorted([*(TESTS / "realworld").rglob("*.py"), *(TESTS.parent / "examples").rglob("*.py")])


def _imported_names(tree: ast.Module) -> set[str]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.update((alias.asname or alias.name).split(".", 1)[0] for alias in node.names)
    return found


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_the_cuts_strings_give_the_same_answers(path):
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    cut = Cut.of(text, lambda *_: True)
    if cut is None:
        pytest.skip("not cut")
    given, own = PartialReceivers(text, tree, cut), PartialReceivers(text, tree, None)
    names = _imported_names(tree) | {"x", "self", "np"}
    assert given._ready() == own._ready()
    assert given._interiors == own._interiors
    assert {n: given.import_targets(n) for n in names} == {n: own.import_targets(n) for n in names}


def test_a_cut_of_other_text_is_not_taken():
    text = 'import jax\ns = """jax"""\n'
    other = 'import jax\n\n\n\ns = """jax"""\n'
    receivers = PartialReceivers(text, ast.parse(text), Cut.of(other))
    assert receivers._ready()
    assert receivers._interiors == string_interiors(text) != Cut.of(other).interiors
    assert receivers.import_targets("jax") == ("jax",)
