"""The cheap tests JAX001's partial reading asks before dropping a `def` whose access text
nothing can trace (``AccessText._untraced_own_level``): each must be a proof.

- ``words.words_once``: the names that are a word of the text once, the same set as a count of
  every word (``Counter(re.findall(r"\\w+", text))``) gives, whichever way it counts (one scan
  per name, one search per shared prefix, or every word);
- ``_access_text._before_nested_scopes``: wherever it says a position lies before anything that
  may open a nested scope, the tree's innermost function, lambda or class holding it is the
  block's own `def` (or none, or a class, in its decorators and signature), on real code;
- the reading built on them keeps every finding: variants of a dropped test method that a
  transform does trace through its name (one of many `test_*` names counted together) or
  through a nested `def`; and it drops what they prove untraced (many `test_*` methods, one
  of whose names begins another's).
"""

from __future__ import annotations

import importlib.util
import re
import textwrap
from collections import Counter
from pathlib import Path

import pytest
from jax_codemod.analysis import words
from jax_codemod.analysis.partial import Cut
from jax_codemod.analysis.words import find_word, words_once
from jax_codemod.rules._access_text import _before_nested_scopes
from test_blocks_own_level import _all_of, checked_against_tree
from test_traced_concrete_access_partial_own_level import (
    UNLIMITED,
    assert_finding_kept,
    findings,
    lazy,
    module,
    partial_reading,
    whole,
)

TESTS = Path(__file__).parent


def _sources() -> list[Path]:
    found = [
        *(TESTS / "snapshots").rglob("*.py"),
        *(TESTS / "realworld").rglob("*.py"),
        *(TESTS.parent / "examples").rglob("*.py"),
    ]
    spec = importlib.util.find_spec("jax")  # found, not imported
    if spec is not None and spec.origin is not None:
        root = Path(spec.origin).parent
        found += sorted((root / "_src").glob("*.py")) + sorted((root / "_src" / "numpy").glob("*.py"))
    return sorted(found)


SOURCES = _sources()


# words_once ----------------------------------------------------------------------------------


def _reference(text: str, names) -> set[str]:
    counts = Counter(re.findall(r"\w+", text))
    return {name for name in names if counts[name] == 1}


def _names(text: str) -> set[str]:
    """Every `def` name and every word that begins another word of the text (`test_a` in
    `test_a_b`), and parts of words (`est_a`): each may be counted by a prefix's search."""
    found = set(re.findall(r"def\s+(\w+)", text))
    every = set(re.findall(r"\w+", text))
    found |= {word[:cut] for word in sorted(every)[:300] for cut in (1, 3, 5) if len(word) > cut}
    found |= {word[1:] for word in sorted(every)[:100] if len(word) > 2}
    return found


PATHS = {
    "as_chosen": {},
    "each_name_alone": {"_GROUPED": 10**9, "_SEARCHED": 10**9, "_STEPS": 1},
    "prefix_groups": {"_GROUPED": 1, "_SEARCHED": 10**9},
    "every_word": {"_SEARCHED": -1},
    "names_inside_words_every_word": {"_GROUPED": 10**9, "_SEARCHED": 10**9, "_STEPS": 10**9},
}


@pytest.mark.parametrize("path", sorted(PATHS))
def test_words_once_is_a_count_of_every_word(path, monkeypatch):
    for name, value in PATHS[path].items():
        monkeypatch.setattr(words, name, value)
    # The 60 largest: which files sort first depends on where the checkout and the venv lie.
    texts = [p.read_text(encoding="utf-8") for p in sorted(SOURCES, key=lambda p: (-p.stat().st_size, p))[:60]]
    texts += [
        "",
        "f",
        "def f(): f",
        "def f(): pass\nff = _f + f_",
        "x = 'é'\ndef é1(x_2):\n    return x_2  # é1x\nclass Bé1: pass\n",
        "test_a test_ab atest_a test_a_ test_b\ntest_c = test_d.test_e(test_c)\n" * 2 + "test_f",
        "".join(f"def test_{n}(self):\n    return self.test_{n + 1}\n" for n in range(12)),
    ]
    checked = 0
    for text in texts:
        names = _names(text)
        assert words_once(text, names) == _reference(text, names)
        cut = Cut.of(text)
        if cut is not None:
            assert words_once(text, names, cut.word_counts) == _reference(text, names)
        checked += len(names)
    assert checked > 10_000


def test_find_word():
    text = "xdef def_ (def) def"
    assert find_word(text, "def") == 11
    assert find_word(text, "def", 12) == 16
    assert find_word(text, "def", 0, 13) == -1  # it would end past the end
    assert find_word(text, "def", 0, 14) == 11
    assert find_word("é_def déf def", "def") == 10


# _before_nested_scopes ---------------------------------------------------------------------


def checked_positions(text: str) -> tuple[int, int]:
    """(positions checked, positions said to lie before any nested scope) over the `def` blocks
    of ``text`` (classes cut into their members): every dot and `(` in code. Fails on a True
    the tree denies (``test_blocks_own_level.checked_against_tree``)."""
    return checked_against_tree(
        text,
        lambda block: sorted(_all_of(text, ".", block) + _all_of(text, "(", block)),
        lambda cut, block, at: _before_nested_scopes(text, block, [block.begin, at]),
    )


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_positions_before_nested_scopes_are_in_the_functions_own_scope(path):
    checked_positions(path.read_text(encoding="utf-8"))


def test_real_code_has_positions_before_nested_scopes():
    checked = before = 0
    for path in SOURCES[:200]:
        one, other = checked_positions(path.read_text(encoding="utf-8"))
        checked, before = checked + one, before + other
    assert before >= 1000 and before < checked


SHAPES = {
    # name: (source, verdict for the `.` of `.item()` on the line marked `# <-`)
    "plain": ("def f(x):\n    y = x.item()  # <-\n", True),
    "one_line_body": ("def f(x): return x.item()  # <-\n", True),
    "a_backslash": ("def f(x):\n    s = 1 + \\\n        2\n    z = x.item()  # <-\n", True),
    "tabs": ("def f(x):\n\tz = x.item()  # <-\n", True),
    "in_a_match": ("def f(x):\n    match x:\n        case 1:\n            y = x.item()  # <-\n", True),
    "in_its_decorator": ("@deco(y.item())  # <-\ndef f(x):\n    pass\n", True),
    "in_the_default": ("def f(x=y.item()):  # <-\n    pass\n", True),
    "a_default_named_default": ("def f(x, default=y.item()):  # <-\n    pass\n", True),
    "after_a_nested_def": ("def f(x):\n    def g(z):\n        return z\n    y = x.item()  # <-\n", False),
    "in_a_nested_def": ("def f(x):\n    def g(z):\n        return z.item()  # <-\n", False),
    "in_an_async_nested_def": ("def f(x):\n    async def g(z):\n        return z.item()  # <-\n", False),
    "in_a_nested_decorator": ("def f(x):\n    @deco(x.item())  # <-\n    def g(z):\n        return z\n", False),
    "in_a_lambda": ("def f(x):\n    g = jax.jit(lambda z: z.item())  # <-\n", False),
    "in_a_nested_class": ("def f(x):\n    class A:\n        y = x.item()  # <-\n", False),
    "in_a_lambda_default": ("def f(x=lambda: 1, y=y.item()):  # <-\n    pass\n", False),
    "in_a_lambda_in_its_decorator": ("@deco(lambda z: z.item())  # <-\ndef f(x):\n    pass\n", False),
    "after_a_lambda_in_its_decorator": ("@deco(lambda z: z)\ndef f(x):\n    y = x.item()  # <-\n", False),
    "one_line_nested_def": ("def f(x):\n    def g(z): return z.item()  # <-\n", False),
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_shapes(name):
    source, expected = SHAPES[name]
    text = "import jax\n\n\n" + textwrap.dedent(source)
    cut = Cut.of(text)
    assert cut is not None
    block = next(b for b in cut.blocks if b.kind == "def")
    marked = text.index("# <-")
    position = text.rindex(".item()", 0, marked)
    assert _before_nested_scopes(text, block, [position]) is expected
    checked_positions(text)  # and the tree agrees with each True


# The reading keeps what the shortcuts must not drop -----------------------------------------

MANY_TESTS = "".join(
    f"""
    def test_case_{n}(self):
        out = jax.jit(lambda x: x + {n})(make(2))
        self.assertEqual(out.sharding, out.sharding)
"""
    for n in range(8)
)

KEPT = {
    # One of many `test_*` names (counted by one search for their prefix) named by a transform.
    "named_among_many_by_a_transform": f"""
        class ApiTest(parameterized.TestCase):
            # members
{textwrap.indent(textwrap.dedent(MANY_TESTS), "            ")}
            def test_case_traced(self, x):
                return x.tolist()

            def test_runs(self):
                jax.jit(self.test_case_traced)(make(3))
    """,
    "in_a_nested_def_a_call_traces": """
        class ApiTest(parameterized.TestCase):
            # members
            def test_nested_call(self):
                def f(x):
                    return x.tolist()

                jax.jit(f)(make(3))
    """,
    "in_a_one_line_nested_def": """
        def check():
            def f(x): return x.tolist()
            return jax.jit(f)(make(3))
    """,
}


@pytest.mark.parametrize("name", sorted(KEPT))
def test_a_variant_a_shortcut_must_not_drop_keeps_its_finding(name):
    assert_finding_kept(module(KEPT[name]))


def test_many_test_methods_named_once_are_decided_clean_without_the_whole_parse():
    # Counted by one search for `test`: `test_case_3` inside `test_case_3_more` is no second one.
    text = module(
        f"""
        class ApiTest(parameterized.TestCase):
            # members
{textwrap.indent(textwrap.dedent(MANY_TESTS), "            ")}
            def test_case_3_more(self):
                pass
        """
    )
    assert findings(whole(text)) == []
    reading = partial_reading.read(lazy(text), UNLIMITED)
    assert reading is not None and not reading.may_matter
    ctx = lazy(text)
    assert findings(ctx) == [] and not ctx.has_tree
