"""The DLPack rules' shortcuts answer exactly as the plain readings they replace.

Each shortcut skips work only where the plain reading would find nothing; these tests run
both on many inputs (made up, the project's own cases and real code) and compare.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax_codemod.analysis import capsules as capsules_module
from jax_codemod.analysis.context import FileContext
from jax_codemod.rules import _dlpack_exports

REPO = Path(__file__).resolve().parent.parent
PIECES = st.one_of(
    st.sampled_from(["from_dlpack", "from_dlpack as ", " as ", "as", " ", "\t", "\n", "x", "é", "_", "9", "ǅ",
                     "from_dlpack as from_dlpack as y", "xfrom_dlpack as z", "from_dlpackas w"]),
    st.text(max_size=4),
)


@settings(max_examples=1500, deadline=None)
@given(st.lists(PIECES, max_size=12))
def test_consumer_aliases_are_the_findall_of_the_word_bounded_pattern(pieces):
    text = "".join(pieces)
    assert _dlpack_exports._consumer_aliases(text) == _dlpack_exports._CONSUMER_ALIAS.findall(text)


def _sources() -> list[Path]:
    paths = [*sorted((REPO / "tests" / "snapshots").rglob("*.py")), *sorted((REPO / "tests" / "realworld").rglob("*.py")),
             *sorted((REPO / "examples").rglob("*.py"))]
    return [path for path in paths if "dlpack" in path.read_text(encoding="utf-8", errors="replace").lower()]


def _plain_dlpack_names(analysis) -> frozenset[str]:
    """``_dlpack_names`` as it was written before its shortcuts: every binding's text read."""
    names = set(capsules_module._DLPACK_FUNCTIONS)
    pending = []
    for targets, value, _ in analysis._index[1]:
        if not capsules_module._may_bind_a_function(value):
            continue
        bound = {n.id if isinstance(n, ast.Name) else n.attr
                 for t in targets for n in ast.walk(t) if isinstance(n, (ast.Name, ast.Attribute))}
        parts = [value] if hasattr(value, "lineno") else [
            d for d in [*value.defaults, *value.kw_defaults] if d is not None]
        if any("dlpack" in analysis.ctx.source_of(part).lower() for part in parts):
            names |= bound
        else:
            pending.append((bound, parts))
    grown = True
    while grown and len(names) > len(capsules_module._DLPACK_FUNCTIONS) and pending:
        grown, rest = False, []
        for bound, parts in pending:
            mentioned = {n.id if isinstance(n, ast.Name) else n.attr
                         for part in parts for n in ast.walk(part) if isinstance(n, (ast.Name, ast.Attribute))}
            if mentioned & names:
                grown = grown or not bound <= names
                names |= bound
            else:
                rest.append((bound, parts))
        pending = rest
    return frozenset(names)


def _context(text: str, name: str = "m.py") -> FileContext:
    return FileContext(name, text, parse=lambda: ast.parse(text))


@pytest.mark.parametrize("path", _sources(), ids=lambda path: str(path.relative_to(REPO)))
def test_dlpack_names_read_only_the_lines_that_say_dlpack(path):
    text = path.read_text(encoding="utf-8")
    try:
        ast.parse(text)
    except SyntaxError:
        pytest.skip("not parsable on this Python")
    analysis = capsules_module.capsules(_context(text, str(path))).index
    assert analysis._dlpack_names == _plain_dlpack_names(analysis)


CODE = st.lists(st.sampled_from([
    "from jax.dlpack import to_dlpack as export\n", "export2 = export\n", "g = h\n", "h = export2\n",
    "self.x = jax.dlpack.to_dlpack\n", "k = (\n    torch.utils.\n    DLPack_thing)\n", "def f(a=export): pass\n",
    "y = jax.dlpack.from_dlpack(t)\n", "z = 'DLPACK'\n", "w = lambda q=g: q\n", "v = \u212a\n", "x = 1  # dlpack\n",
    "a, b = to_dlpack, 2\n", "import torch.utils.dlpack as tud\n", "for e in [export]: pass\n",
]), max_size=10)


@settings(max_examples=300, deadline=None)
@given(CODE)
def test_dlpack_names_on_made_up_modules(lines):
    text = "".join(lines)
    analysis = capsules_module.capsules(_context(text)).index
    assert analysis._dlpack_names == _plain_dlpack_names(analysis)


def test_the_comparison_sees_bound_names():
    text = "from jax.dlpack import to_dlpack as export\nalias = export\nother = alias\n"
    analysis = capsules_module.capsules(_context(text)).index
    assert {"export", "alias", "other"} <= analysis._dlpack_names == _plain_dlpack_names(analysis)
    assert re.search("dlpack", text)


def test_the_shared_node_list_is_ast_walk_less_the_leaf_tokens():
    from jax_codemod.analysis import values

    paths = [*sorted((REPO / "codemods").rglob("*.py")), *sorted((REPO / "tests" / "realworld").rglob("*.py"))]
    for path in paths:
        tree = ast.parse(path.read_bytes())
        expected = [node for node in ast.walk(tree) if type(node) not in values._LEAF_TOKENS]
        got = values._walk_without_leaf_tokens(tree)
        assert len(got) == len(expected) and all(a is b for a, b in zip(got, expected)), path
    assert {ast.Load, ast.Store, ast.Add, ast.Not, ast.And, ast.Eq} <= values._LEAF_TOKENS
    assert not values._LEAF_TOKENS & {ast.Name, ast.Call, ast.Compare, ast.BinOp}
