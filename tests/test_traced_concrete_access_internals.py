"""JAX001's private readings checked against the plain ones they stand for: the receiver judge
(``_Receivers``: expressions the partial reading calls no tracer without the whole-file value
analysis) and the access-line shortcuts. They go with the rule's tracing answer; the partial
reading's own claims, through its public interface, are in test_traced_concrete_access_partial.py,
whose cases are reused here."""

from __future__ import annotations

import ast

import pytest
from jax_codemod.analysis import partial as partial_reading
from jax_codemod.analysis import words
from jax_codemod.analysis.partial import Cut, is_word_char
from jax_codemod.analysis.partial_receivers import PartialReceivers, file_receivers
from jax_codemod.analysis.transforms import TRANSFORM_LEAVES
from jax_codemod.rules import traced_concrete_access as jax001
from test_traced_concrete_access_partial import (
    CASES,
    CLASS_CASES,
    CORPUS,
    CUT_OR_NOT,
    FILLER,
    INSTALLED_JAX,
    MORE_CLASS_SHAPES,
    RULE,
    TEXTS_WITH_COMMENT_GAPS,
    UNLIMITED,
    decided_clean,
    in_a_test_class,
    lazy,
    partial_context,
    random_class_module,
    whole,
    with_filler,
)
from test_traced_concrete_access_partial import check_equivalent as check_partial_equivalent


def check_equivalent(text: str):
    """The partial reading's claims for ``text``, and the judge's: what it calls no tracer, the
    whole-file value analysis calls no tracer either."""
    partial = check_partial_equivalent(text)
    if partial is not None:
        check_judged_receivers(text)
    return partial


# Receivers judged without the whole-file value analysis ---------------------------------------


def receivers_of(text: str):
    """The partial tree's ``_Receivers`` (the whole tree's when the text is read whole: it also
    holds every import at its line), with the text's cut when there is one."""
    reading = partial_reading.read(lazy(text), UNLIMITED)
    tree = reading.context.tree if reading is not None else ast.parse(text)
    return PartialReceivers(text, tree, Cut.of(text, RULE.PARTS.cuts_class))


def check_judged_receivers(text: str) -> int:
    """Every expression of the partial tree that ``_Receivers`` calls no tracer, the whole-file
    value analysis calls no tracer either; how many it judged."""
    judge = receivers_of(text)
    tree = judge.tree
    every = whole(text)
    at = {
        (type(n), n.lineno, n.col_offset, n.end_lineno, n.end_col_offset): n
        for n in ast.walk(every.tree)
        if isinstance(n, ast.expr)
    }
    judged = 0
    for node in ast.walk(tree):
        if isinstance(node, (ast.Name, ast.Call, ast.BinOp, ast.UnaryOp, ast.Attribute)) and judge.never_tracer(node):
            same = at[(type(node), node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)]
            assert not every.analysis.is_tracer(same), ast.unparse(node)
            judged += 1
    return judged


# `mod` bound otherwise than by an import, somewhere in the file: no judgement.
REBINDINGS = {
    "function_local": "def f():\n    mod = 1\n",
    "module_level": "mod = 1\n",
    "module_level_annotated": "mod: int = 1\n",
    "parenthesized_target": "(mod) = 1\n",
    "tuple_target": "mod, other = 1, 2\n",
    "starred_target": "*mod, = [1]\n",
    "chained_target": "a = mod = 1\n",
    "augmented": "def f():\n    mod += 1\n",
    "class_attribute": "class C:\n    mod = 1\n",
    "parameter": "def f(mod):\n    return 1\n",
    "keyword_only_parameter": "def f(*, mod=None):\n    return 1\n",
    "lambda_parameter": "f = lambda mod: 1\n",
    "global": "def f():\n    global mod\n    mod = 1\n",
    "global_only": "def f():\n    global mod\n",
    "nonlocal": "def f():\n    mod = 2\n    def g():\n        nonlocal mod\n",
    "del": "def f():\n    del mod\n",
    "walrus": "def f(x):\n    if (mod := x):\n        return 1\n",
    "walrus_in_f_string": "def f(x):\n    return f'{(mod := x)}'\n",
    "walrus_in_triple_f_string": "def f(x):\n    return f'''\n{(mod := x)}\n'''\n",
    "comprehension": "def f(xs):\n    return [mod for mod in xs]\n",
    "for_target": "def f(xs):\n    for mod in xs:\n        pass\n",
    "with_target": "def f(c):\n    with c as mod:\n        pass\n",
    "except_target": "def f():\n    try:\n        pass\n    except Exception as mod:\n        pass\n",
    "function_name": "def mod():\n    pass\n",
    "class_name": "class mod:\n    pass\n",
    "match_capture": "def f(x):\n    match x:\n        case mod:\n            pass\n",
    "match_sequence": "def f(x):\n    match x:\n        case [mod, *_]:\n            pass\n",
    "same_line_as_import": "import os; mod = 1\n",
    "import_as_itself_and_more": "import os, mod as mod\n",
    "keyword_argument": "f(mod=1)\n",
    "passed": "print(mod)\n",
    "after_continuation": "x = [1,\n    mod]\n",
}


@pytest.mark.parametrize("name", sorted(REBINDINGS))
def test_a_name_bound_otherwise_than_by_an_import_is_not_judged(name):
    text = "import jax\nimport mod\n" + "".join(FILLER.format(n=n) for n in range(3)) + REBINDINGS[name]
    try:
        ast.parse(text)
    except SyntaxError:
        pytest.skip("not this Python's syntax")
    judge = receivers_of(text)
    assert judge.import_targets("mod") is None
    assert judge.import_targets("jax") == ("jax",)
    check_judged_receivers(text)


# `mod` bound by imports only (or named in strings, comments and attributes): judged.
IMPORTS_ONLY = {
    "plain": ("import mod\n", ("mod",)),
    "dotted": ("import mod.sub\n", ("mod",)),
    "alias": ("import pkg.sub as mod\n", ("pkg.sub",)),
    "from": ("from pkg import mod\n", ("pkg.mod",)),
    "from_alias": ("from pkg import other as mod\n", ("pkg.other",)),
    "relative": ("from . import mod\n", (None,)),
    "parenthesized": ("from pkg import (\n    a,\n    mod,\n)\n", ("pkg.mod",)),
    "in_a_function": ("import jax\n\ndef f():\n    import mod\n    return mod.x\n", ("mod",)),
    "twice": ("import mod\nfrom pkg import mod\n", ("mod", "pkg.mod")),
    "attributes_and_strings": (
        "import mod\nx.mod = 1\nfrom mod.sub import y\ns = 'mod = 1'\n# mod = 2\nd = '''\nmod = 3\n'''\n",
        ("mod",),
    ),
    "read_as_a_module": ("import mod\n\ndef f():\n    return mod.x + mod.y(mod.z)\n", ("mod",)),
}


@pytest.mark.parametrize("name", sorted(IMPORTS_ONLY))
def test_a_name_bound_by_imports_only_is_judged(name):
    source, targets = IMPORTS_ONLY[name]
    text = "import jax\n" + source + "".join(FILLER.format(n=n) for n in range(3))
    assert receivers_of(text).import_targets("mod") == targets
    check_judged_receivers(text)


def test_a_brace_before_the_name_in_a_string_is_not_judged():
    # A replacement field may bind it (`f"{(mod := x)}"`); any `{` before it refuses.
    for text in ("import mod\ns = '{x} mod'\n", "import mod\ns = '''{\nmod'''\n", "import mod\ns = '} mod'\n"):
        assert receivers_of(text).import_targets("mod") is None


TRACED_CLOSURES = {
    # `mod` in the inner jitted function is the outer trace's tracer: the value analysis reads it
    # through the enclosing scope; the judge must not call it a module.
    "assigned": "    mod = x + 1\n",
    "walrus": "    if (mod := x + 1) is not None:\n        pass\n",
    "for_target": "    for mod in [x]:\n        pass\n",
    "tuple_target": "    mod, _ = x, x\n",
    "annotated": "    mod: jax.Array = x\n",
}


@pytest.mark.parametrize("name", sorted(TRACED_CLOSURES))
def test_a_module_name_rebound_to_a_tracer_keeps_its_finding(name):
    text = with_filler(
        "import jax\nimport mod\n\n\n@jax.jit\ndef outer(x):\n"
        + TRACED_CLOSURES[name]
        + "    @jax.jit\n    def inner(y):\n        return y + mod.item()\n\n    return inner(x)\n"
    )
    check_equivalent(text)
    check_judged_receivers(text)
    assert receivers_of(text).import_targets("mod") is None


def test_module_receivers_are_decided_from_the_partial_tree():
    """`jax.devices()`, `jax.typeof(x).sharding`, `core.typeof(x).sharding` and an operator
    over constants in a trace: no tracer for the value analysis, decided without it."""
    text = with_filler("""
        import jax
        from jax._src import core

        @jax.jit
        def step(x):
            devices = jax.devices()
            spec = jax.typeof(x).sharding
            other = core.typeof(x).sharding
            z = (1.0 + 0j).item()
            return x + len(devices)
    """)
    assert check_judged_receivers(text) >= 4
    ctx = lazy(text)
    assert RULE.check(ctx) == [] and not ctx.has_tree
    check_equivalent(text)


TYPEOF_MODULES = {
    "jax": ("import jax\n", True),
    "jax_core": ("import jax.core as B\n", True),
    "private_core": ("from jax._src import core as B\n", True),
    "numpy": ("import jax.numpy as B\n", False),  # `jax.numpy.typeof` would be an array function
    "relative": ("from . import B\n", False),
    "two_modules": ("import jax as B\nimport jax.numpy as B\n", False),
}


@pytest.mark.parametrize("name", sorted(TYPEOF_MODULES))
def test_typeof_is_judged_only_from_jax_and_its_core(name):
    source, judged = TYPEOF_MODULES[name]
    module = "jax" if name == "jax" else "B"
    text = with_filler(
        "import jax\n" + (source if name != "jax" else "")
        + f"\n\n@jax.jit\ndef step(x):\n    s = {module}.typeof(x).sharding\n    return x\n"
    )
    [call] = [n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Call) and ast.unparse(n.func).endswith("typeof")]
    assert receivers_of(text).never_tracer(call) is judged
    check_judged_receivers(text)
    check_equivalent(text)


def test_a_module_rebound_in_another_block_is_read_whole():
    # `jax` is rebound in a block the partial reading drops: the judge reads the whole text.
    text = with_filler("""
        import jax

        @jax.jit
        def step(x):
            return x + len(jax.devices())

        def later():
            global jax
            jax = None
    """)
    ctx = lazy(text)
    partial = partial_context(ctx)
    assert partial is not None and "global jax" not in partial.text
    assert not decided_clean(lazy(text))
    check_equivalent(text)


# `aval` made a field or attribute of a class somewhere in the file: `E.aval` is not judged.
ATTRIBUTE_BINDINGS = {
    "init_field": "class Box:\n    def __init__(self, x):\n        self.aval = x\n",
    "init_field_parenthesized": "class Box:\n    def __init__(self, x):\n        (self.aval) = x\n",
    "init_field_continued": "class Box:\n    def __init__(self, x):\n        self.\\\n        aval = x\n",
    "init_field_in_brackets": "class Box:\n    def __init__(self, x):\n        (self.\n        aval) = x\n",
    "init_field_commented": "class Box:\n    def __init__(self, x):\n        (self.  # why\n        aval) = x\n",
    "annotated_attribute": "class Box:\n    def set(self, x):\n        self.aval: int = x\n",
    "spaced_dot": "class Box:\n    def set(self, x):\n        self . aval = x\n",
    "record_field": "import dataclasses\n\n@dataclasses.dataclass\nclass Box:\n    aval: object\n",
    "class_attribute": "class Box:\n    aval = None\n",
    "class_attribute_chained": "class Box:\n    other = aval = None\n",
    "method": "class Box:\n    def aval(self):\n        return 1\n",
    "property": "class Box:\n    @property\n    def aval(self):\n        return 1\n",
    "nested_class": "def make(x):\n    class Box:\n        aval = x\n    return Box\n",
    "nested_class_in_a_method": (
        "class Outer:\n    def make(self, x):\n        class Box:\n            aval = x\n        return Box\n"
    ),
    "class_in_a_module_level_if": "import sys\nif sys:\n    class Box:\n        aval = None\n",
    "default_in_a_method_header": "class Box:\n    def f(self, aval=None):\n        return 1\n",
}


def aval_case(code: str) -> str:
    """``code`` among filler, then a traced function that reads ``b.aval`` of a parameter."""
    return (
        "import jax\n" + "".join(FILLER.format(n=n) for n in range(3)) + code
        + "\n\n@jax.jit\ndef step(x, b):\n    return x + b.aval.sharding.item()\n"
    )


def aval_receiver(text: str):
    """(the partial path's receiver judge of ``text``, its one `b.aval` node)."""
    judge = receivers_of(text)
    [receiver] = [n for n in ast.walk(judge.tree) if isinstance(n, ast.Attribute) and ast.unparse(n) == "b.aval"]
    return judge, receiver


@pytest.mark.parametrize("name", sorted(ATTRIBUTE_BINDINGS))
def test_an_attribute_a_class_may_bind_is_not_judged(name):
    # The class also holds access text, so that it is cut into its members when it can be.
    text = aval_case(ATTRIBUTE_BINDINGS[name])
    text = text.replace("\nclass Box:\n", "\nclass Box:\n    def g(self, y):\n        return y.tolist()\n\n", 1)
    judge, receiver = aval_receiver(text)
    assert not judge.never_tracer(receiver)
    check_judged_receivers(text)
    check_equivalent(text)


# Reads of `.aval`, and `aval` as a function's local: judged.
ATTRIBUTE_READS = {
    "read": "def f(x):\n    return x.aval.shape\n",
    "called": "def f(x):\n    return x.aval(1), x.aval[0]\n",
    "local_in_a_method": (
        "class T:\n    def g(self, y):\n        return y.tolist()\n\n    def f(self):\n        aval = 1\n"
        "        return g(aval, {'k': aval})\n"
    ),
    "local_after_a_nested_class": (
        "class T:\n    def g(self, y):\n        return y.tolist()\n\n    def f(self):\n        class D:\n"
        "            pass\n        aval = D()\n        return aval.value\n"
    ),
    "module_level_function": "def f():\n    aval = 1\n    self.aval = 2\n    return aval\n",
    "module_level_statement": "aval = None\nx = [aval for aval in range(3)]\n",
    "in_strings_and_comments": "s = 'aval = 1'\n# self.aval = 2\n",
}


@pytest.mark.parametrize("name", sorted(ATTRIBUTE_READS))
def test_an_attribute_no_class_binds_is_judged(name):
    text = aval_case(ATTRIBUTE_READS[name])
    judge, receiver = aval_receiver(text)
    assert judge.never_tracer(receiver)
    check_judged_receivers(text)
    check_equivalent(text)


def test_a_traced_field_named_aval_keeps_its_finding():
    """`Box(x).aval` in a trace is the tracer `x`, for the value analysis: read whole, found."""
    text = with_filler("""
        import jax

        class Box:
            def __init__(self, x):
                self.aval = x

            def g(self, y):
                return y.tolist()

        @jax.jit
        def step(x):
            b = Box(x)
            return b.aval.item()
    """)
    every = whole(text)
    [receiver] = [n for n in ast.walk(every.tree) if isinstance(n, ast.Attribute) and ast.unparse(n) == "b.aval"]
    assert every.analysis.is_tracer(receiver)
    assert [f.to_json()["code"] for f in RULE.check(lazy(text))] == ["JAX001"]
    check_equivalent(text)


# The judge on the partial readings' own cases -------------------------------------------------


def judged_cases() -> list[str]:
    texts = [in_a_test_class(CLASS_CASES[name]) for name in sorted(CLASS_CASES)]
    texts += [
        CUT_OR_NOT[name].replace("\nclass A", "".join(FILLER.format(n=n) for n in range(4)) + "\n\nclass A", 1)
        for name in sorted(CUT_OR_NOT)
    ]
    texts += [
        MORE_CLASS_SHAPES[name].replace("\nclass A", "".join(FILLER.format(n=n) for n in range(4)) + "\n\nclass A", 1)
        for name in sorted(MORE_CLASS_SHAPES)
    ]
    texts += [with_filler(CASES[name]) for name in sorted(CASES)]
    return texts


@pytest.mark.parametrize("text", judged_cases(), ids=lambda t: str(abs(hash(t)) % 10**8))
def test_the_judge_agrees_with_the_value_analysis_on_the_partial_cases(text):
    check_judged_receivers(text)
    check_judged_receivers(text.replace("jax.jit", "jax.named_call").replace("jax.vmap", "jax.named_call"))


@pytest.mark.parametrize("seed", range(150))
def test_the_judge_agrees_with_the_value_analysis_on_random_classes(seed):
    check_judged_receivers(random_class_module(seed))


# The access-line shortcuts ------------------------------------------------------------------


@pytest.mark.parametrize("source", [*CORPUS, *INSTALLED_JAX[::3], *range(len(TEXTS_WITH_COMMENT_GAPS))], ids=str)
def test_any_access_line_is_whether_there_are_access_lines(source):
    text = TEXTS_WITH_COMMENT_GAPS[source] if isinstance(source, int) else source.read_text(encoding="utf-8")
    for piece in (text, text[: len(text) // 3], text[len(text) // 2 :], "jax.sharding\n", "jnp.asarray(x)\n", " bytes (x)"):
        assert jax001.TEXT.any_access_line(piece) == bool(jax001.TEXT.access_lines(piece))


@pytest.mark.parametrize("path", [*CORPUS, *INSTALLED_JAX[::3]], ids=lambda p: p.name)
def test_the_called_lines_are_the_word_lines_of_the_calls(path):
    # The region the rule reads holds the lines where a transform is called (``called_positions``,
    # a reversed-text search), as the plain whole-word search finds them.
    text = path.read_text(encoding="utf-8")
    names = sorted(jax001.Spellings(whole(text, str(path))).call_names)
    assert words.lines_of(text, sorted(words.called_positions(text, names))) == _called_lines(text, names)


@pytest.mark.parametrize("path", [*CORPUS, *INSTALLED_JAX[::3]], ids=lambda p: p.name)
def test_the_finds_of_a_files_own_names_agree_with_the_reversed_regex(path):
    # A file's own names (its imports) are found one str.find each, the table's names with the
    # cached reversed-text regex: every split of the same words gives the same positions.
    text = path.read_text(encoding="utf-8")
    names = frozenset(jax001.Spellings(whole(text, str(path))).call_names) | {"f", "x", "np", "asarray", "jit_x"}
    expected = words.called_positions(text, names)
    assert words.called_positions(text, names, table=frozenset()) == expected
    assert words.called_positions(text, names, table=TRANSFORM_LEAVES) == expected
    consumers = frozenset(jax001.TEXT.consumer_names)
    assert words.called_positions(text, consumers, "jnp.", table=frozenset()) == words.called_positions(text, consumers, "jnp.")


def _called_lines(text: str, names) -> set[int]:
    """Lines where one of ``names`` is called as a whole word (`name (`): one str.find per name,
    the plain search the reversed-text regex must agree with."""
    positions = []
    for name in names:
        start = text.find(name)
        while start != -1:
            end = start + len(name)
            after = end
            while after < len(text) and text[after] in " \t":
                after += 1
            if (
                (start == 0 or not is_word_char(text[start - 1]))
                and (end == len(text) or not is_word_char(text[end]))
                and after < len(text)
                and text[after] == "("
            ):
                positions.append(start)
            start = text.find(name, end)
    return words.lines_of(text, sorted(positions))


# The judge over a whole file's tree ----------------------------------------------------------


@pytest.mark.parametrize("path", CORPUS[::3], ids=lambda p: p.name)
def test_the_judge_over_the_whole_tree_calls_no_tracer_what_the_analysis_calls_a_tracer(path):
    """``check`` on a whole tree asks the judge (``file_receivers``: the whole tree's) before the
    value analysis, and takes its "never a tracer" as the analysis' answer: every receiver of
    an access the judge decides, the analysis calls no tracer either."""
    text = path.read_text(encoding="utf-8")
    try:
        every = whole(text, str(path))
    except SyntaxError:
        pytest.skip("not Python")
    judge = file_receivers(every, RULE.PARTS.cuts_class)
    for node in ast.walk(every.tree):
        access = jax001.TEXT.as_access(every, node)
        if access is not None and judge.never_tracer(access[0]):
            assert not every.analysis.is_tracer(access[0]), ast.unparse(node)


IMPORT_SHAPES = (
    "import a\n",
    "if x:\n    import b\nelse:\n    from c import d\n",
    "try:\n    import e\nexcept ImportError:\n    e = None\nfinally:\n    from f import (\n        g,\n    )\n",
    "def h():\n    class I:\n        def j(self):\n            import k\n",
    "match m:\n    case 1:\n        import n\n    case _:\n        pass\n",
    "from o \\\n    import p\n",
    "x = 'import q'  # import r\nimport qq\n",
    "with s:\n    for t in u:\n        while v:\n            import w\n",
    "y = 1; import z\n",
    "import aa\r\nimport bb\n",
    "if c:\r    import cc\r",
)


@pytest.mark.parametrize("text", [*IMPORT_SHAPES, "".join(IMPORT_SHAPES[:9])])
def test_the_judge_reads_the_import_statements_a_whole_walk_finds(text):
    """The judge walks only the statements whose lines hold the word `import` (a whole file's
    tree has thousands of statements): the import statements, in order, of every statement."""
    from jax_codemod.analysis.context import statements
    from jax_codemod.analysis.partial_receivers import _statements_importing

    tree = ast.parse(text)
    imports = (ast.Import, ast.ImportFrom)
    expected = [s for s in statements(tree.body) if isinstance(s, imports)]
    assert expected
    assert [s for s in _statements_importing(tree, text) if isinstance(s, imports)] == expected


@pytest.mark.parametrize("path", CORPUS[::5], ids=lambda p: p.name)
def test_the_judge_reads_the_import_statements_of_real_files(path):
    from jax_codemod.analysis.context import statements
    from jax_codemod.analysis.partial_receivers import _statements_importing

    text = path.read_text(encoding="utf-8")
    try:
        tree = ast.parse(text)
    except SyntaxError:
        pytest.skip("not Python")
    imports = (ast.Import, ast.ImportFrom)
    expected = [s for s in statements(tree.body) if isinstance(s, imports)]
    assert [s for s in _statements_importing(tree, text) if isinstance(s, imports)] == expected
