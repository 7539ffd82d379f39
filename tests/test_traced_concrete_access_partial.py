"""JAX001 decides most files from a partial parse (only the top-level blocks that can matter),
through the engine's mechanism for it (``analysis.partial``, declared as ``Rule.PARTS``).

The claims checked here: the partial tree binds the same names and finds the same traced
functions with the same candidate accesses as the whole tree; when the partial decision says
"no finding", the whole-file analysis agrees; the findings are the same whichever path ran;
and the partial tree never reaches other rules through ``ctx.tree``. Everything goes through
the public interface: ``partial.read`` with the rule's ``PARTS`` (or a declaration of the
test's own), the ``Cut`` it reads, and the rule's ``clean_from_parts``/``clean_in``. The
receiver judge, private to JAX001, is checked in test_traced_concrete_access_internals.py.
"""

from __future__ import annotations

import ast
import dataclasses
import gc
import importlib.util
import random
import re
import textwrap
import weakref
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax_codemod.analysis import partial as partial_reading
from jax_codemod.analysis.blocks import (
    Block,
    brackets_balance,
    class_members,
    in_code,
    partial_source,
    string_interiors,
    top_level_blocks,
)
from jax_codemod.analysis.context import FileContext, child_nodes
from jax_codemod.analysis.partial import (
    NON_ASCII,
    WORDS,
    Cut,
    Parts,
    imports_only,
    non_ascii_runs,
    reached,
    with_members,
    word_positions,
)
from jax_codemod.analysis.tracing import tracing_for
from jax_codemod.analysis.transforms import TRANSFORM_LEAVES
from jax_codemod.engine.pipeline import check_source
from jax_codemod.rule import FixSafety, Rule
from jax_codemod.rules import traced_concrete_access as jax001
from jax_codemod.rules.sharded_dlpack_export import ShardedDlpackExport
from jax_codemod.rules.traced_concrete_access import TracedConcreteAccess

RULE = TracedConcreteAccess()
MEMBERS = jax001.members_for(None)
# The rule's declaration without its size limit: the partial reading whatever share it keeps.
UNLIMITED = dataclasses.replace(RULE.PARTS, most=None)
TESTS = Path(__file__).parent
CORPUS = sorted(
    [
        *(TESTS / "snapshots").rglob("*.py"),
        *(TESTS / "realworld").rglob("*.py"),
        *(TESTS.parent / "examples").rglob("*.py"),
    ]
)


def lazy(text: str, path: str = "case.py") -> FileContext:
    return FileContext(path, text, parse=lambda: ast.parse(text))


def whole(text: str, path: str = "case.py") -> FileContext:
    return FileContext(path, text, ast.parse(text))


def partial_context(ctx: FileContext) -> FileContext | None:
    """The context of the blocks JAX001's answer depends on (None: read whole)."""
    reading = partial_reading.read(ctx, UNLIMITED)
    return None if reading is None else reading.context


def cut_text(text: str):
    """(its triple-quoted strings' interiors, its top-level blocks) of ``text``; the blocks are
    None when it cannot be cut."""
    interiors = string_interiors(text)
    return interiors, (top_level_blocks(text, interiors) if interiors is not None else None)


def member_cut(text: str):
    """(blocks, ``Cut``) of ``text`` with its classes cut into their members, as the rule's
    reading cuts it; (None, None) when it cannot be cut."""
    cut = Cut.of(text, RULE.PARTS.cuts_class)
    return (None, None) if cut is None else (cut.blocks, cut)


def candidates(ctx: FileContext) -> set[tuple]:
    """Traced functions that hold a node the rule would check as an access, with how they are
    traced and where those nodes are."""
    return jax001.candidate_accesses(ctx, MEMBERS)


def names_of(ctx: FileContext) -> dict[str, tuple[bool, str | None]]:
    """What each word of the file names at module level: bound or not, and to what."""
    return {word: (ctx.is_bound(word), ctx.qualname(ast.Name(id=word))) for word in set(WORDS.findall(ctx.text))}


def same_names(one: FileContext, other: FileContext) -> bool:
    words = set(WORDS.findall(one.text)) | set(WORDS.findall(other.text))
    return all(
        (one.is_bound(w), one.qualname(ast.Name(id=w))) == (other.is_bound(w), other.qualname(ast.Name(id=w)))
        for w in words
    )


# A stub: what the partial text holds on a dropped block's first line (blank lines after it).
STUB = re.compile(r"[ \t]*(?:class \w+:(?: pass)?|\w+ = None|pass)?")


def check_partial_text(text: str, partial: str) -> None:
    """The partial text has the file's lines: each line is the file's (a lifted import without
    its indentation), or a stub or blank (no dot, no call). So a line-by-line text search (the
    rule's access lines) finds in it what it finds in the file on the kept lines."""
    mine, theirs = partial.split("\n"), text.split("\n")
    assert len(mine) == len(theirs)
    for line, original in zip(mine, theirs):
        assert line == original or line.strip() == original.strip() or STUB.fullmatch(line), (line, original)


def decided_clean(ctx: FileContext) -> bool:
    """What check() concludes from the partial tree alone: True when it returns no finding
    without parsing the whole file (the rule's own decision, its shortcuts included)."""
    decided = RULE.clean_from_parts(ctx)
    assert not ctx.has_tree
    return decided


def same_findings(text: str) -> list:
    via_partial = RULE.check(lazy(text))
    via_whole = RULE.check(whole(text))
    assert [f.to_json() for f in via_partial] == [f.to_json() for f in via_whole]
    assert [f.data for f in via_partial] == [f.data for f in via_whole]
    return via_whole


# Every snapshot input, real-world file and example ---------------------------------------


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: str(p.relative_to(TESTS.parent)))
def test_partial_tree_finds_what_the_whole_tree_finds(path):
    check_partial_properties(path)


def installed_jax_sources() -> list[Path]:
    spec = importlib.util.find_spec("jax")  # found, not imported: only its files are read
    if spec is None or spec.origin is None:
        return []
    return sorted((Path(spec.origin).parent / "_src").glob("*.py"))


# JAX-heavy code nobody here wrote, where most files have no access a trace reaches: the
# shortcuts that skip the partial analysis are exercised there.
INSTALLED_JAX = installed_jax_sources()


@pytest.mark.parametrize("path", INSTALLED_JAX, ids=lambda p: p.name)
def test_partial_tree_finds_what_the_whole_tree_finds_in_jax(path):
    check_partial_properties(path)


def test_installed_jax_exercises_the_no_access_shortcut():
    if not INSTALLED_JAX:
        pytest.skip("jax is not installed")
    shortcut = 0
    for path in INSTALLED_JAX:
        text = path.read_text(encoding="utf-8")
        if RULE.prefilter(path.read_bytes()):
            reading = partial_reading.read(lazy(text), UNLIMITED)
            shortcut += reading is not None and not reading.may_matter
    assert shortcut >= 5


def check_partial_properties(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    source = path.read_bytes()
    every = whole(text, str(path))
    if not RULE.prefilter(source):
        # (a) the byte gate: no finding is possible, whatever the text gate says.
        assert not jax001.candidate_accesses(every, MEMBERS, judged=True)
        return
    reading = partial_reading.read(lazy(text, str(path)), UNLIMITED)
    if reading is not None:
        partial = reading.context
        # The tree put together from the blocks parsed apart is the parse of its text.
        assert ast.dump(partial.tree, include_attributes=True) == ast.dump(ast.parse(partial.text), include_attributes=True)
        # (b) the same bindings, the candidate accesses of the whole tree (a few more where a
        # call of a stubbed helper gets tracers: it may return one there, ``Tracing.
        # _may_be_stubbed``; never fewer), and the file's own lines wherever the partial text
        # holds more than a stub.
        assert same_names(partial, every)
        assert candidates(partial) >= candidates(every)
        check_partial_text(text, partial.text)
        if not reading.may_matter:
            # (c) the shortcut: no kept block holds access text on a chain from a transform,
            # and the partial tree indeed has no candidate access (by (b), neither has the
            # whole tree).
            assert not candidates(partial)
    if decided_clean(lazy(text, str(path))):
        # (a) the partial decision: no finding in the whole file either.
        assert not jax001.candidate_accesses(every, MEMBERS, judged=True)
    assert [f.to_json() for f in RULE.check(lazy(text, str(path)))] == [
        f.to_json() for f in RULE.check(every)
    ]


def test_the_corpus_exercises_both_paths():
    """The corpus test above would pass vacuously if every file fell back to the whole parse."""
    decided = kept_findings = 0
    for path in CORPUS:
        text = path.read_text(encoding="utf-8")
        if not RULE.prefilter(path.read_bytes()):
            continue
        decided += decided_clean(lazy(text))
        partial = partial_context(lazy(text))
        kept_findings += partial is not None and bool(candidates(partial))
    assert decided >= 10
    assert kept_findings >= 30


# The gate's edge cases ---------------------------------------------------------------------

FILLER = '''

def unrelated_{n}(values):
    """Nothing traced here."""
    return [v + {n} for v in values]
'''


def with_filler(source: str) -> str:
    """The case between unrelated blocks, so that a partial parse really drops some."""
    source = textwrap.dedent(source)
    head, _, rest = source.partition("\n\n")
    return head + "".join(FILLER.format(n=n) for n in range(3)) + "\n\n" + rest + FILLER.format(n=9)


CASES = {
    "nested_def": """
        import jax

        def outer(x):
            def inner(y):
                return y.item()
            return jax.jit(inner)(x)
    """,
    "module_lambda": """
        import jax

        step = jax.jit(lambda x: x.unsafe_buffer_pointer())
    """,
    "helper_in_another_block": """
        import jax

        def helper(x):
            return x.tolist()

        @jax.jit
        def step(x):
            return helper(x)
    """,
    "module_alias": """
        import jax

        J = jax.jit

        @J
        def step(x):
            return x.devices()
    """,
    "decorated_method": """
        import functools
        import jax

        class Model:
            @functools.partial(jax.jit, static_argnums=0)
            def step(self, x):
                x.block_until_ready()
                return x + 1
    """,
    "partial_jit": """
        from functools import partial
        import jax

        @partial(jax.jit, static_argnames=("n",))
        def step(x, n):
            record(x.unsafe_buffer_pointer())
            return x * n
    """,
    "jit_call_in_another_block": """
        import jax as jx

        def body(x):
            print(x.addressable_shards)
            return x

        fast = jx.jit(body)
    """,
    "imported_alias": """
        from jax import jit as compile_step

        @compile_step
        def step(x):
            return x.on_device_size_in_bytes()
    """,
    "decorator_factory": """
        import jax

        def compiled(fn):
            return jax.jit(fn, donate_argnums=())

        @compiled
        def step(x):
            x.copy_to_host_async()
            return x
    """,
    "partial_alias_statement": """
        import functools
        import jax

        fast = functools.partial(jax.jit, static_argnums=(1,))

        @fast
        def step(x, n):
            return x.tolist()
    """,
    "bare_consumer_alias": """
        import jax
        import numpy as np
        from numpy import asarray as to_host

        ONES = np.asarray([1.0])

        @jax.jit
        def step(x):
            return to_host(x)
    """,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_edge_cases_keep_their_findings(name):
    text = with_filler(CASES[name])
    found = same_findings(text)
    assert found, "the case has a finding"
    assert not decided_clean(lazy(text))
    partial = partial_context(lazy(text))
    assert partial is not None and "def unrelated_0" not in partial.text  # the filler was dropped
    assert candidates(partial) == candidates(whole(text))


def test_a_def_inside_a_multi_line_string_is_no_block():
    text = with_filler('''
        import jax

        EXAMPLE = """
        @jax.jit
        def fake(x):
            return x.item()
        """

        @jax.jit
        def real(x):
            return x.tolist()
    ''')
    blocks = top_level_blocks(text)
    assert "fake" not in {b.name for b in blocks}
    assert [f.line for f in same_findings(text)] == [text.count("\n", 0, text.index("x.tolist")) + 1]


def test_a_triple_quote_in_a_comment_or_string_opens_nothing():
    text = textwrap.dedent('''
        X = "\'\'\'"  # and here: """
        # """
        def f(x):
            return x
    ''')
    assert [(b.start, b.kind, b.name) for b in top_level_blocks(text)] == [(2, "assign", "X"), (4, "def", "f")]


def test_the_clauses_of_a_compound_statement_stay_with_it():
    text = "try:\n    import numpy as np\nexcept ImportError:\n    np = None\nelse:\n    pass\n"
    [block] = top_level_blocks(text)
    assert (block.start, block.kind) == (1, "other")


def test_stubs_bind_what_the_blocks_bind():
    text = textwrap.dedent("""
        import jax
        TABLE = {"a": 1}
        rows["x"] = dict(a=1)

        def f(x):
            return x

        class C:
            pass
    """)
    blocks = top_level_blocks(text)
    stubbed = partial_source(text, blocks, [b.kind == "other" for b in blocks])
    assert stubbed.count("\n") == text.count("\n")
    assert same_names(FileContext("s.py", stubbed, ast.parse(stubbed)), whole(text))


@pytest.mark.parametrize("path", [*CORPUS, *INSTALLED_JAX[::3]], ids=lambda p: p.name)
def test_a_partial_tree_binds_the_names_its_own_text_binds(path):
    # The partial context takes the base's bindings unless it adds a module-level assignment.
    partial = partial_context(lazy(path.read_text(), str(path)))
    if partial is not None:
        assert same_names(partial, FileContext(partial.path, partial.text, partial.tree))


BINDS_IN_AN_ADDED_BLOCK = textwrap.dedent("""
    import jax
    import numpy as np

    def step(x):
        return np.asarray(x)

    run = jax.jit(step)
""")


def test_bindings_come_from_the_base_unless_an_added_block_binds_a_module_name():
    text = BINDS_IN_AN_ADDED_BLOCK
    inherited = partial_context(lazy(text))
    assert same_names(inherited, whole(text))
    # An added `name = ...` block may bind its name otherwise than its stub does: a reading
    # that adds one (here a declaration whose only target and root is `run = jax.jit(step)`,
    # which no `keeps_call` keeps in the base) binds what the whole file binds.
    blocks = top_level_blocks(text)
    [run] = [i for i, b in enumerate(blocks) if b.kind == "call"]
    reading = partial_reading.read(lazy(text), Parts(relevant=lambda cut, base, bindings: ({run}, {run})))
    assert reading is not None and reading.may_matter
    assert "run = jax.jit(step)" in reading.context.text and "run = None" not in reading.context.text
    assert "run = None" in reading.base.text  # the base held its stub
    assert same_names(reading.context, whole(text))


def test_a_syntax_error_in_an_irrelevant_block_is_not_read():
    text = with_filler("""
        import jax

        def broken(:
            pass

        @jax.jit
        def step(x):
            return x + 1

        def host(y):
            return y.item()
    """)
    ctx = lazy(text)
    assert RULE.check(ctx) == []
    assert not ctx.has_tree  # decided without the whole parse
    with pytest.raises(SyntaxError):
        ctx.tree  # noqa: B018 -- what another rule reading the tree gets: the file's error


def test_a_syntax_error_in_a_block_that_matters_is_reported():
    text = with_filler("""
        import jax

        @jax.jit
        def step(x):
            return x.item() +
    """)
    with pytest.raises(SyntaxError):
        RULE.check(lazy(text))
    # Through the engine: the same error as before, with its line.
    with pytest.raises(SyntaxError) as error:
        check_source(text.encode(), "case.py", [RULE])
    assert error.value.lineno == text.count("\n", 0, text.index("x.item")) + 1


def test_the_partial_tree_does_not_leak_into_ctx_tree():
    text = with_filler("""
        import jax

        @jax.jit
        def step(x):
            return x + 1

        def host(y):
            return y.item()
    """)
    ctx = lazy(text)
    assert RULE.check(ctx) == []
    assert not ctx.has_tree
    assert ast.dump(ctx.tree) == ast.dump(ast.parse(text))


def test_an_already_parsed_tree_is_used_as_it_is(monkeypatch):
    text = with_filler(CASES["helper_in_another_block"])
    ctx = whole(text)
    calls = []
    original = partial_reading.read
    monkeypatch.setattr(partial_reading, "read", lambda c, parts: calls.append(c) or original(c, parts))
    assert RULE.check(ctx)
    assert calls == []
    assert RULE.check(lazy(text)) and len(calls) == 1  # (the patch is the one the rule reads)


def test_strings_and_comments_are_told_from_code():
    text = 'x = "a;b"; y = 1  # c;d\nz = """q;\n;""" ; w\ns = \'\\\';\' ;\n'
    interiors = string_interiors(text)
    semicolons = [i for i, c in enumerate(text) if c == ";"]
    assert [in_code(text, i, interiors) for i in semicolons] == [False, True, False, False, False, True, False, True]


def test_text_that_cannot_be_cut_surely_is_read_whole():
    # A line continued by a backslash into column 0, a form feed, an unterminated string.
    for text in ("x = 1 + \\\ny.item()\n", "import jax\n\x0c\ndef f(x):\n    return x.item()\n", 'x = """\n'):
        assert partial_context(lazy(text)) is None


def test_child_nodes_are_iter_child_nodes():
    tree = ast.parse(textwrap.dedent(CASES["decorated_method"]) + textwrap.dedent(CASES["module_lambda"]))
    for node in ast.walk(tree):
        assert child_nodes(node) == list(ast.iter_child_nodes(node))


def test_non_ascii_code_is_read_whole():
    # NFKC: the parser reads the fullwidth letters as `item`, which no text search sees.
    text = with_filler("""
        import jax

        @jax.jit
        def step(x):
            return x.\uff49tem()
    """)
    assert partial_context(lazy(text)) is None
    # With an access spelled plainly elsewhere (the text gate passes), both paths find it.
    text += "\n\ndef host(y):\n    return y.item()\n"
    [finding] = same_findings(text)
    assert finding.line == text.count("\n", 0, text.index("\uff49tem")) + 1
    docstring_only = with_filler('''
        import jax

        def f(x):
            """Returns x \u2264 1."""
            return x
    ''')
    assert partial_context(lazy(docstring_only)) is not None


def test_a_function_gives_only_its_imports():
    text = with_filler("""
        import jax

        def loader(path):
            from numpy import (
                asarray as to_host,
            )
            import pickle as pk
            return pk.load(open(path, "rb"))

        def other(path):
            from x import (a,
                b); J = jax.jit
            return a

        @jax.jit
        def step(x):
            return to_host(x)
    """)
    blocks = top_level_blocks(text)
    [loader] = [i for i, b in enumerate(blocks) if b.name == "loader"]
    [other] = [i for i, b in enumerate(blocks) if b.name == "other"]
    positions = [i for i in range(len(text)) if text.startswith("import", i)]
    only = imports_only(text, blocks[loader], [p for p in positions if blocks[loader].begin <= p < blocks[loader].finish], RULE.PARTS.unliftable)
    assert only.count("\n") == text.count("\n", blocks[loader].begin, blocks[loader].finish)
    assert "return" not in only and "import pickle as pk" in only
    assert imports_only(text, blocks[other], [p for p in positions if blocks[other].begin <= p < blocks[other].finish], RULE.PARTS.unliftable) is None
    partial = partial_context(lazy(text))
    assert same_names(partial, whole(text))
    assert "pk.load" not in partial.text
    [finding] = same_findings(text + "\nHOST = [].tolist()\n")  # `to_host` is numpy.asarray
    assert "to_host" in finding.message


def test_imports_with_comments_give_only_the_imports():
    """Google-style code marks local imports with a pylint comment, and comments mention
    imports: neither keeps the whole function."""
    text = with_filler("""
        import jax

        def loader(path):
            # a failed import must not fall back to CPU.
            import pickle as pk  # pylint: disable=g-import-not-at-top
            from numpy import (  # see asarray()
                asarray as to_host,
            )
            return pk.load(open(path, "rb"))

        def quoted(path):
            import json  # "quoted"
            return json.load(path)

        @jax.jit
        def step(x):
            return to_host(x)
    """)
    blocks = top_level_blocks(text)
    [loader] = [i for i, b in enumerate(blocks) if b.name == "loader"]
    [quoted] = [i for i, b in enumerate(blocks) if b.name == "quoted"]
    interiors = string_interiors(text)
    code = [i for i in range(len(text)) if text.startswith("import ", i) and in_code(text, i, interiors)]
    only = imports_only(text, blocks[loader], [p for p in code if blocks[loader].begin <= p < blocks[loader].finish], RULE.PARTS.unliftable)
    assert "return" not in only and "import pickle as pk" in only and "asarray as to_host" in only
    assert imports_only(text, blocks[quoted], [p for p in code if blocks[quoted].begin <= p < blocks[quoted].finish], RULE.PARTS.unliftable) is None
    partial = partial_context(lazy(text))
    assert same_names(partial, whole(text))
    assert "pk.load" not in partial.text and "json.load" in partial.text
    [finding] = same_findings(text)  # `to_host` is numpy.asarray, bound inside `loader`
    assert "to_host" in finding.message


def test_a_file_kept_almost_whole_is_read_whole():
    """When the blocks that matter are most of the file, the partial parse would cost what the
    whole one does (and often be followed by it): the rule reads the whole file at once, with
    the same findings."""
    text = textwrap.dedent(
        """
        import jax

        def helper(x):
            return x.tolist()

        @jax.jit
        def step(x):
            y = helper(x)
            return x.unsafe_buffer_pointer(), y
        """
    )
    assert partial_context(lazy(text)) is not None
    assert partial_reading.read(lazy(text), RULE.PARTS) is None
    assert not decided_clean(lazy(text))
    assert same_findings(text)
    filler = with_filler(CASES["helper_in_another_block"])
    assert partial_reading.read(lazy(filler), RULE.PARTS) is not None  # the filler is most of it


# The cheaper readings against the plain ones -------------------------------------------------

# Patterns of the kind the rule's relevance scan hands ``Cut.matching_families`` (an attribute
# after a dot, whitespace, line breaks and comments around it), made from the rule's public
# tables: the members, the consumers and the transforms.
METHOD_NAMES = sorted(m.name for m in jax001.TRACER_MEMBERS if m.positional is not None)
PROPERTY_NAMES = sorted(m.name for m in jax001.TRACER_MEMBERS if m.positional is None)
CONSUMER_NAMES = sorted({name.rsplit(".", 1)[-1] for name in jax001.CONSUMERS} | set(jax001.BUFFER_METHODS))
TRANSFORM_NAMES = sorted(TRANSFORM_LEAVES - {"partial"})
GAP = r"(?:\s|\\)*"
COMMENTED_GAP = rf"{GAP}(?:#[^\n]*\n{GAP})*"
ACCESS_AFTER_DOT = rf"(?:{'|'.join(METHOD_NAMES)}){GAP}[(#]|(?:{'|'.join(PROPERTY_NAMES)})(?!\w)(?!{GAP}\()"
POSSIBLE_ACCESS = re.compile(rf"\.{COMMENTED_GAP}(?:{ACCESS_AFTER_DOT})")
POSSIBLE_CONSUMER = re.compile(rf"\.{COMMENTED_GAP}({'|'.join(CONSUMER_NAMES)}){GAP}[(#]")
TRANSFORM_ATTRIBUTE = re.compile(rf"\.{COMMENTED_GAP}({'|'.join(TRANSFORM_NAMES)})(?!\w)")
DOTTED_FAMILIES = re.compile(
    rf"\.{COMMENTED_GAP}(?:(?P<access>{ACCESS_AFTER_DOT})"
    rf"|(?P<consumer>{'|'.join(CONSUMER_NAMES)}){GAP}[(#]|(?P<transform>{'|'.join(TRANSFORM_NAMES)})(?!\w))"
)


def forward_reach(text: str, blocks, live: set[int], cut) -> set[int]:
    """The chain reading as first written: forward from ``live``, through every word of a
    reached block's text that names a function (a method: from a block of its class or a related one)."""
    defined = {}
    for index in range(len(blocks)):
        for name, within in cut.defines(index):
            defined.setdefault(name, []).append((index, within))
    reach, pending = set(live), list(live)
    while pending:
        source = pending.pop()
        block = blocks[source]
        for word in set(WORDS.findall(text, block.begin, block.finish)) & defined.keys():
            for target, within in defined[word]:
                if target not in reach and within in (None, cut.member_of[source]):
                    reach.add(target)
                    pending.append(target)
    return reach


@pytest.mark.parametrize("path", [*CORPUS, *INSTALLED_JAX[::3]], ids=lambda p: p.name)
def test_walking_back_from_the_accesses_finds_the_forward_chains(path):
    """``reached`` (backwards from the access blocks) answers what the forward closure from the
    transform blocks answers, for many choices of both sets on real files' blocks."""
    import random

    text = path.read_text(encoding="utf-8")
    blocks, cut = member_cut(text)
    if not blocks:
        return
    chooser = random.Random(path.name)
    size = len(blocks)
    for _ in range(12):
        live = {i for i in range(size) if chooser.random() < chooser.choice((0.02, 0.1, 0.3))}
        accesses = {i for i in range(size) if chooser.random() < chooser.choice((0.02, 0.1))} or {size - 1}
        reach = forward_reach(text, blocks, live, cut)
        assert reached(cut, live, accesses) == bool(accesses & reach)
        for access in list(accesses)[:3]:  # each access block alone: the answer is often False
            assert reached(cut, live, {access}) == (access in reach)


@pytest.mark.parametrize("path", [*CORPUS, *INSTALLED_JAX[::3]], ids=lambda p: p.name)
def test_a_blocks_words_are_the_regex_words_of_its_text(path):
    """``Cut.words`` (split at the characters a translation made spaces) against the regex it
    replaces, for every block of real files (class members too)."""
    text = path.read_text(encoding="utf-8")
    blocks, cut = member_cut(text)
    if not blocks:
        return
    for index, block in enumerate(blocks):
        assert cut.words(index) == set(WORDS.findall(text, block.begin, block.finish))


@settings(max_examples=800, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(["x", "_a1", "9", " ", "\t", "\n", ".", "(", "é", "→", "\x1c", "\x1f", "\x85", "\u3000", "ǅ", "ｉ"]),
            st.text(st.characters(max_codepoint=0x7F), max_size=5),
        ),
        max_size=20,
    ),
    st.integers(0, 30),
    st.integers(0, 30),
)
def test_words_of_any_text_are_the_regex_words(pieces, first, last):
    text = "".join(pieces)
    begin, finish = sorted((min(first, len(text)), min(last, len(text))))
    cut = Cut(text, [Block(1, 1, begin, finish, None)], [])
    assert cut.words(0) == set(WORDS.findall(text, begin, finish))


@pytest.mark.parametrize("path", [*CORPUS, *INSTALLED_JAX[::3]], ids=lambda p: p.name)
def test_blocks_naming_a_word_are_those_its_positions_are_in(path):
    """``Cut.naming`` reads one occurrence per block: the same blocks as every occurrence's,
    for every word of the file (with and without the triple-quoted strings' words)."""
    text = path.read_text(encoding="utf-8")
    interiors, blocks = cut_text(text)
    if not blocks:
        return
    cut = Cut(text, blocks, interiors)
    words = sorted(set(WORDS.findall(text)))[:: max(1, len(set(WORDS.findall(text))) // 300)]
    for word in [*words, "import", "bytes", "jit"]:
        assert cut.naming(word) == cut.blocks_at(word_positions(text, word)), word
        raw = {i for i, b in enumerate(blocks) if word in WORDS.findall(text, b.begin, b.finish)}
        assert cut.naming(word, strings=True) == raw, word
    # Within a class cut into its members: the blocks of that class only.
    members = with_members(text, blocks, interiors, RULE.PARTS.cuts_class)
    cut = Cut(text, members, interiors)
    spans = sorted({span for span in cut.member_of if span is not None})
    for span in spans[:5]:
        inside = {i for i, span_of in enumerate(cut.member_of) if span_of == span}
        for word in [*words[:60], "self", "jit"]:
            every = cut.naming(word, strings=True)
            assert cut.naming(word, strings=True, within=span) == every & inside, word


def test_comments_before_the_first_block_are_in_no_block():
    """A licence header or a comment above the imports that spells an access or a transform is
    no code: it neither holds an access nor makes the last block spell a transform."""
    text = with_filler('''
        # Call `jax.jit` on it; `x.item()` gives a number; `host` is the helper.
        import jax

        def host(y):
            return y.item()

        @jax.jit
        def step(x):
            return x + 1
    ''')
    text = text[text.index("#"):]
    interiors = string_interiors(text)
    cut = Cut(text, top_level_blocks(text, interiors), interiors)
    assert cut.block_of(text.index("item")) is None and cut.naming("host") == {cut.block_of(text.index("def host"))}
    assert decided_clean(lazy(text))
    assert same_findings(text) == []


def test_a_run_of_non_ascii_characters_is_code_or_not_as_a_whole():
    """``_partial`` asks ``in_code`` once per run of non-ASCII characters: each character of a
    run gets the same answer (a run holds no quote, `#` or line end)."""
    checked = 0
    made = 'x = "ωω # ω"  # ωω \'\nπ = 1  # ＃ “ωπ”\ns = """\nω’s\n""" + \'π\'  # ω\n'
    for text in [made, *(path.read_text(encoding="utf-8") for path in [*CORPUS, *INSTALLED_JAX])]:
        interiors = string_interiors(text)
        if text.isascii() or interiors is None:
            continue
        for run in NON_ASCII.finditer(text):
            answers = {in_code(text, i, interiors) for i in range(run.start(), run.end())}
            assert len(answers) == 1, run.group()
            checked += run.end() - run.start() > 1
    assert checked >= 4


@pytest.mark.parametrize("path", [*CORPUS, *INSTALLED_JAX[::3]], ids=lambda p: p.name)
def test_blocks_matching_skip_no_block_finditer_finds(path):
    """``Cut.matching`` goes on at a found block's end: the same blocks as every match's, for
    the three patterns ``_partial`` reads and any choice of which matches count."""
    text = path.read_text(encoding="utf-8")
    interiors, blocks = cut_text(text)
    if not blocks:
        return
    cut = Cut(text, blocks, interiors)
    for pattern, offset in (
        (POSSIBLE_ACCESS, 1),
        (POSSIBLE_CONSUMER, 1),
        (TRANSFORM_ATTRIBUTE, 0),
        (WORDS, 0),
    ):
        for accept in (None, lambda m: len(m.group()) % 3 != 0, lambda m: m.start() % 2 == 0):
            every = cut.blocks_at(m.start() + offset for m in pattern.finditer(text) if accept is None or accept(m))
            assert cut.matching(pattern, accept, offset=offset) == every
            assert cut.matching(pattern, accept, offset=offset, found={0}) == every | {0}


TEXTS_WITH_COMMENT_GAPS = [
    # Matches that overlap: a comment between the dot and the name holds another match.
    "import jax\nimport numpy as np\n\n\ndef f(x):\n    return (x.  # see y.jit and np.asarray(z)\n        item())\n",
    "import jax\n\n\ndef f(x):\n    return (x.  # a.devices() b.jit\n        jit, x.\\\n  asarray(x))\n\n\ng = 1\n",
    # A consumer match not taken whose comment holds one that is: its own scan goes on past it.
    "import numpy as np\n\n\ndef f(x):\n    return (x.  # np.asarray(y)\n        array(x))\n\n\ndef g(y):\n    return y\n",
]


@pytest.mark.parametrize("source", [*CORPUS, *INSTALLED_JAX[::3], *range(len(TEXTS_WITH_COMMENT_GAPS))], ids=str)
def test_one_scan_of_the_three_dotted_patterns_finds_what_three_scans_find(source):
    """``Cut.matching_families`` against ``Cut.matching`` of each pattern on its own (a
    block's members too), for several choices of which matches count and shared ``found``."""
    text = TEXTS_WITH_COMMENT_GAPS[source] if isinstance(source, int) else source.read_text(encoding="utf-8")
    interiors, blocks = cut_text(text)
    if not blocks:
        return
    for cut in (Cut(text, blocks, interiors), Cut(text, with_members(text, blocks, interiors, RULE.PARTS.cuts_class), interiors)):
        for choice in range(5):
            def accept(match, choice=choice):
                start, word = match.start(), match.group(match.lastgroup or 1)
                if choice == 4:
                    return word != "array"
                return choice == 0 or (start + len(word)) % (choice + 1) != 0

            accesses = cut.matching(POSSIBLE_ACCESS, offset=1)
            cut.matching(POSSIBLE_CONSUMER, accept, offset=1, found=accesses)
            spelled = cut.matching(TRANSFORM_ATTRIBUTE, accept)
            one, other = set(), set()
            cut.matching_families(
                DOTTED_FAMILIES,
                {"access": (1, None, one), "consumer": (1, accept, one), "transform": (0, accept, other)},
            )
            assert (one, other) == (accesses, spelled)


@pytest.mark.parametrize("path", [*CORPUS, *INSTALLED_JAX[::3]], ids=lambda p: p.name)
def test_a_blocks_line_breaks_are_counted_from_its_line_numbers(path):
    text = path.read_text(encoding="utf-8")
    for piece in (text, text.rstrip("\n"), text + "\n\n"):
        interiors, blocks = cut_text(piece)
        if not blocks:
            continue
        for cut in (blocks, with_members(piece, blocks, interiors, RULE.PARTS.cuts_class)):
            assert [b.line_breaks(piece) for b in cut] == [piece.count("\n", b.begin, b.finish) for b in cut]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(["import jax", "x = 1", "def f(x):", "    return x", "class C:", "    def m(self):",
                                 "        pass", "", "# c", "    # c", "@jax.jit", "y = (", "1)", '"""', "s"]), max_size=14),
       st.booleans())
def test_line_breaks_of_made_up_blocks(lines, final_break):
    text = "\n".join(lines) + ("\n" if final_break else "")
    interiors, blocks = cut_text(text)
    for cut in (blocks or [], with_members(text, blocks, interiors, RULE.PARTS.cuts_class) if blocks else []):
        assert [b.line_breaks(text) for b in cut] == [text.count("\n", b.begin, b.finish) for b in cut]


def test_the_families_of_the_one_scan_spell_different_names():
    # (``matching_families`` needs at most one family to match at a position.)
    access = {*METHOD_NAMES, *PROPERTY_NAMES}
    transforms = set(TRANSFORM_NAMES)
    assert not access & set(CONSUMER_NAMES) and not access & transforms
    assert not set(CONSUMER_NAMES) & transforms


def test_the_non_ascii_runs_are_the_regex_runs():
    made = "a = 'é'\nb = 1\n# ωω π\n\nc = 'x'  # “q”\nπ"
    for text in [made, *(p.read_text(encoding="utf-8") for p in [*CORPUS, *INSTALLED_JAX])]:
        assert list(non_ascii_runs(text)) == [m.start() for m in NON_ASCII.finditer(text)]


COLUMN_ZERO_INSIDE_BRACKETS = {
    # The access on a line of its own: the function's block and the line's are two stubs.
    "access_line": "import jax\n\n\ndef f(x):\n    return g(\nx.item())\n\n\ndef g(v):\n    return v\n\n\nh = jax.jit(f)\n",
    # Implicit string concatenation: the second string starts a line.
    "string_line": 'import jax\n\n\n@jax.jit\ndef f(x):\n    return g("a"\n"b", x.tolist())\n\n\ndef g(*v):\n    return v\n',
    # A keyword argument at column 0 reads as `jit = 1`: a stub that would shadow the import.
    "keyword_line": (
        "from jax import jit\n\ny = dict(\njit=1)\n\n\n@jit\ndef f(x):\n    return x.item()\n"
    ),
    # `@` at column 0 inside brackets reads as a decorator of the next statement.
    "matmul_line": (
        "import jax\n\n\n@jax.jit\ndef f(x, w):\n    return (w\n@ x.devices())\n\n\ndef g(v):\n    return v\n"
    ),
}


@pytest.mark.parametrize("name", sorted(COLUMN_ZERO_INSIDE_BRACKETS))
def test_a_line_at_column_zero_inside_brackets_keeps_its_finding(name):
    """Such a line looks like a block of its own; a kept block cut there does not parse, but
    two stubbed halves are never parsed: the rule reads such a file whole."""
    text = with_filler(COLUMN_ZERO_INSIDE_BRACKETS[name]) if name != "keyword_line" else COLUMN_ZERO_INSIDE_BRACKETS[name]
    assert RULE.check(whole(text)), "the whole-file analysis finds it"
    assert same_findings(text)
    assert partial_context(lazy(text)) is None


def test_brackets_balance_counts_code_only():
    text = 'x = f(")", "(")  # (\ny = """\n(\n"""\nz = [\n'
    interiors = string_interiors(text)
    starts = [a for a, _ in interiors]
    second = text.index("y =")
    third = text.index("z =")
    assert brackets_balance(text, 0, second, interiors, starts)
    assert brackets_balance(text, second, third, interiors, starts)
    assert not brackets_balance(text, third, len(text), interiors, starts)
    assert not brackets_balance("s = 'a\\\nb'\n", 0, 12, [], [])  # a string continued past its line: unsure


def test_blocks_matching_skip_the_triple_quoted_strings_only():
    """The pieces between triple-quoted strings: a match right before an opening quote or right
    after a closing one counts, one inside does not, as with finditer."""
    text = textwrap.dedent(
        '''\
        import jax
        a = x.item()"""y.tolist()"""; b = jax.jit
        def f(x):
            """x.devices() and jax.jit"""
            return x.sharding""""""
        c = r"""
        z.item()
        """.format(jax.vmap)
        d = 1
        e = q.tolist()
        '''
    )
    interiors = string_interiors(text)
    cut = Cut(text, top_level_blocks(text, interiors), interiors)
    for pattern, offset in ((POSSIBLE_ACCESS, 1), (TRANSFORM_ATTRIBUTE, 0)):
        every = cut.blocks_at(m.start() + offset for m in pattern.finditer(text))
        assert cut.matching(pattern, offset=offset) == every
    assert cut.matching(POSSIBLE_ACCESS, offset=1) == {1, 2, 5}
    assert cut.matching(TRANSFORM_ATTRIBUTE) == {1, 3}


# Module-level classes cut into their members ------------------------------------------------
#
# A test module is one class holding every test: the partial reading keeps the methods on a
# chain from a transform to an access and stubs the others, at their lines. The claims: the
# same traced functions and candidate accesses as the whole tree (a method the cut dropped
# would be missing from them), the same findings both ways, and "no finding" only where the
# whole-file analysis agrees.


def check_equivalent(text: str) -> FileContext | None:
    """The properties above for one text; the partial context (None: read whole)."""
    every = whole(text)
    assert [f.to_json() for f in RULE.check(lazy(text))] == [f.to_json() for f in RULE.check(every)]
    if decided_clean(lazy(text)):
        assert not jax001.candidate_accesses(every, MEMBERS, judged=True)
    partial = partial_context(lazy(text))
    if partial is not None:
        assert ast.dump(partial.tree, include_attributes=True) == ast.dump(ast.parse(partial.text), include_attributes=True)
        assert same_names(partial, every)
        assert candidates(partial) >= candidates(every)
    return partial


FILLER_METHODS = '''
    def test_unrelated_{n}(self):
        """Nothing traced here: {n}."""
        values = [v + {n} for v in range(3)]
        self.assertEqual(len(values), 3)
'''


def in_a_test_class(source: str, filler: int = 6) -> str:
    """``source`` (a module whose last class is cut) with unrelated methods around the members."""
    source = textwrap.dedent(source)
    methods = "".join(FILLER_METHODS.format(n=n) for n in range(filler))
    head, marker, rest = source.partition("    # members\n")
    assert marker, "the case marks where its class's members go"
    more = methods.replace("test_unrelated", "test_more")
    body, end, after = rest.partition("    # end\n")  # where the class ends, when code follows
    return head + methods + body + more + end + after


CLASS_CASES = {
    # `jax.jit(self._step)`: the method reached through `self`, its access in the other method.
    "self_method_jitted": """
        import jax

        class StepTest:
            # members
            def test_step(self):
                return jax.jit(self._step)(1.0)

            def _step(self, x):
                return x.item()
    """,
    # A chain through `self`: the method that maps `self.inner` holds no access text, but the
    # transform is applied in it, so it is kept with the method that holds the access.
    "self_chain": """
        import jax

        class ChainTest:
            # members
            def test_run(self):
                return self.mapped(1.0)

            def mapped(self, x):
                return jax.vmap(self.inner)(x)

            def inner(self, x):
                return x.tolist()
    """,
    # A class attribute that jits a module-level function.
    "class_attribute_jit": """
        import jax

        def body(x):
            return x.devices()

        class Holder:
            # members
            fast = jax.jit(body)
    """,
    # A class attribute that jits a lambda with the access in it.
    "class_attribute_lambda": """
        import jax

        class Holder:
            # members
            fast = jax.jit(lambda x: x.unsafe_buffer_pointer())
    """,
    "decorated_partial_method": """
        import functools
        import jax

        class Model:
            # members
            @functools.partial(jax.jit, static_argnums=0)
            def step(self, x):
                x.block_until_ready()
                return x + 1
    """,
    # Decorators over several lines, a comment between them.
    "multi_line_decorator": """
        from functools import partial
        import jax

        class Model:
            # members
            @partial(
                jax.jit,
                static_argnames=("n",),
            )
            # why it is jitted
            def step(self, x, n):
                return x.tolist()
    """,
    "nested_class": """
        import jax

        class Outer:
            # members
            class Inner:
                @jax.jit
                def step(x):
                    return x.item()
    """,
    # Properties and class-level statements between the methods.
    "property_and_statements": """
        import jax

        class Model:
            # members
            size = 3
            table = {"a": 1}

            @property
            def shape(self):
                return (self.size,)

            if size > 2:
                extra = True

            @jax.jit
            def step(x):
                return x.sharding
    """,
    # A def under an `if` in a class body resolves by its name in the analysis.
    "def_under_if_in_class": """
        import jax

        class Model:
            # members
            if True:
                def hidden(x):
                    return x.item()
            # end

        fast = jax.jit(hidden)
    """,
    # A stubbed method's import binds its name: `np.asarray` is numpy's because of it.
    "import_in_a_stubbed_method": """
        import jax

        class Loader:
            # members
            def setUp(self):
                import numpy as np
                self.np = np

            @jax.jit
            def step(x):
                return np.asarray(x)
    """,
    # A method whose header goes on over several lines, its body with a continued line.
    "continued_lines": """
        import jax

        class Model:
            # members
            @jax.jit
            def step(x,
                     y):
                total = x + \\
                    y
                return total.item()
    """,
    # A triple-quoted string holding `def` lines at the body's indentation.
    "string_holding_def": '''
        import jax

        class Model:
            # members
            TEMPLATE = """
            def fake(self):
                return 1
        """

            @jax.jit
            def step(x):
                return x.tolist()
    ''',
    # The method that holds the access and jits a nested function, one among many.
    "test_method_with_nested_jit": """
        import jax
        import jax.numpy as jnp

        class ApiTest:
            # members
            def test_item(self):
                def f(x):
                    return x.item()
                return jax.jit(f)(jnp.ones(()))
    """,
    # A method named like a module-level function: both are reached.
    "method_named_like_a_function": """
        import jax

        def helper(x):
            return x.tolist()

        class Model:
            # members
            @jax.jit
            def step(self, x):
                return helper(x)

            def helper(self, x):
                return x
    """,
}


@pytest.mark.parametrize("name", sorted(CLASS_CASES))
def test_a_class_cut_into_members_keeps_its_findings(name):
    text = in_a_test_class(CLASS_CASES[name])
    found = same_findings(text)
    assert found, "the case has a finding"
    assert not decided_clean(lazy(text))
    partial = check_equivalent(text)
    assert partial is not None
    cls = text[text.index("\nclass ") :]
    if RULE.PARTS.cuts_class(cls, 0, len(cls)):
        # A class with access text is cut: the unrelated methods are stubbed.
        assert "test_unrelated_0(self)" not in partial.text
        assert "    test_unrelated_0 = None" in partial.text


@pytest.mark.parametrize("name", sorted(CLASS_CASES))
def test_a_class_without_the_transform_has_no_finding(name):
    """The same shapes with the transforms renamed: nothing is traced, and the partial reading
    says so without the whole parse where the whole-file analysis agrees."""
    text = in_a_test_class(CLASS_CASES[name])
    text = text.replace("jax.jit", "jax.named_call").replace("jax.vmap", "jax.named_call")
    check_equivalent(text)
    assert not RULE.check(whole(text))


def _test_module(method: str, after: str = "") -> str:
    """A test module: ``method`` (indented as written, at the class body's level) among 300
    unrelated methods, then ``after`` (module level)."""
    methods = "".join(FILLER_METHODS.format(n=n) for n in range(300))
    return (
        textwrap.dedent(
            """
            import jax
            import jax.numpy as jnp


            class ApiTest:
            """
        )
        + methods
        + textwrap.indent(textwrap.dedent(method), "    ")
        + textwrap.dedent(after)
    )


TEST_JIT = """
    def test_jit(self):
        out = jax.jit(lambda x: x * 2)(jnp.ones(3))
        self.assertEqual(out[0].item(), 2.0)
"""


def test_a_test_module_is_decided_from_its_traced_method():
    """One test method with `jax.jit` and `.item()` outside the trace among 300, named
    elsewhere (so it may be traced: a transform may be given it): the partial reading keeps
    it and stubs the rest, and decides the file without the whole parse."""
    text = _test_module(TEST_JIT, "\nCHECKED = jax.jit(ApiTest.test_jit)\n")
    ctx = lazy(text)
    assert RULE.check(ctx) == []
    assert not ctx.has_tree
    partial = check_equivalent(text)
    assert partial is not None and "def test_jit(self)" in partial.text
    assert "def test_unrelated" not in partial.text and partial.text.count(" = None") == 300


def test_a_test_method_named_nowhere_else_is_no_target():
    """The same method named nowhere else, its `.item()` at its own level (not in the
    lambda): only a trace of `test_jit` itself could make it a tracer's, and nothing can
    trace it. The reading keeps no block of the class: nothing in the file matters."""
    text = _test_module(TEST_JIT)
    ctx = lazy(text)
    assert RULE.check(ctx) == []
    assert not ctx.has_tree
    reading = partial_reading.read(lazy(text), UNLIMITED)
    assert reading is not None and not reading.may_matter
    assert "def test_jit(self)" not in reading.context.text
    check_equivalent(text)


def test_the_members_are_the_statements_the_parser_sees():
    """``class_members`` against ``ast``: the blocks cover the class, and each method and
    nested class directly in its body starts the block of its kind and name, at its line."""
    checked = 0
    for path in [*CORPUS, *INSTALLED_JAX]:
        text = path.read_text(encoding="utf-8")
        interiors, blocks = cut_text(text)
        if not blocks or "\r" in text:
            continue
        starts = [a for a, _ in interiors]
        tree = None
        for block in blocks:
            if block.kind != "class":
                continue
            members = class_members(text, block, interiors, starts)
            if members is None:
                continue
            tree = tree or ast.parse(text)
            [node] = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.lineno >= block.start and n.end_lineno <= block.end]
            assert members[0].begin == block.begin and members[-1].finish == block.finish
            assert all(a.finish == b.begin and a.end + 1 == b.start for a, b in pairwise(members))
            assert all(m.start == text.count("\n", 0, m.begin) + 1 for m in members)
            first_line = {m.start: m for m in members}
            for statement in node.body:
                line = statement.decorator_list[0].lineno if getattr(statement, "decorator_list", None) else statement.lineno
                member = first_line[line]  # every statement starts a block...
                if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    assert (member.kind, member.name) == ("def" if not isinstance(statement, ast.ClassDef) else "class", statement.name)
                else:
                    assert member.kind in ("assign", "call", "item", "other")
            assert len(members) - 1 == len(node.body)  # ...and no block starts elsewhere
            checked += 1
    assert checked >= 20


CUT_OR_NOT = {
    # Tabs as the body's indentation: cut like spaces.
    "tabs": "import jax\n\nclass A:\n\tdef f(self):\n\t\treturn 1\n\n\t@jax.jit\n\tdef g(x):\n\t\treturn x.item()\n",
    # One space.
    "one_space": "import jax\n\nclass A:\n def f(self):\n  return 1\n @jax.jit\n def g(x):\n  return x.item()\n",
    # A tab after the body's spaces: deeper, cut.
    "tab_after_spaces": "import jax\n\nclass A:\n    def f(self):\n    \treturn 1\n    @jax.jit\n    def g(x):\n    \treturn x.item()\n",
    # The body on the header's line.
    "one_line_body": "import jax\n\nclass A: x = jax.jit(lambda v: v.item())\n",
    # A statement continued by a backslash at the body's indentation.
    "backslash": "import jax\n\nclass A:\n    x = 1 + \\\n    2\n    @jax.jit\n    def g(x):\n        return x.item()\n",
    # A bracket's line at the body's indentation, in a method.
    "bracket_line": "import jax\n\nclass A:\n    @jax.jit\n    def g(x):\n        return f(x,\n    x.item())\n",
    # A bracket's line dedented past the body.
    "dedented_bracket_line": "import jax\n\nclass A:\n    @jax.jit\n    def g(x):\n        return f(x,\n  x.item())\n",
    # `@` inside brackets at the body's indentation reads as a decorator.
    "matmul": "import jax\n\nclass A:\n    @jax.jit\n    def g(x, w):\n        return (w\n    @ x.devices())\n",
    # A header over several lines, a comment and a string with a colon in its bases.
    "long_header": 'import jax\n\nclass A(\n    dict,  # a base: here\n    metaclass=type,\n):\n    @jax.jit\n    def g(x):\n        return x.item()\n',
    "decorated_class": "import jax\nimport dataclasses\n\n@dataclasses.dataclass\nclass A:\n    n: int = 1\n    @jax.jit\n    def g(x):\n        return x.item()\n",
    # A comment at column 0 and at odd indentations inside the body.
    "odd_comments": "import jax\n\nclass A:\n# here\n  # and here\n    @jax.jit\n    def g(x):\n# between\n        return x.item()\n",
    # A docstring first, `else` at the body's level.
    "docstring_and_else": 'import jax\n\nclass A:\n    """Doc: def f(self):"""\n    if jax:\n        pass\n    else:\n        @jax.jit\n        def g(x):\n            return x.item()\n',
    # A method that jits another class's method of the same name: not resolved by the analysis.
    "other_class": "import jax\n\nclass A:\n    def g(self, x):\n        return x.item()\n\nclass B:\n    def run(self, a):\n        return jax.jit(a.g)(1)\n",
    # An async method and a nested class with a decorator.
    "async_and_nested": "import jax\n\nclass A:\n    async def f(self):\n        return 1\n    @staticmethod\n    class B:\n        @jax.jit\n        def g(x):\n            return x.tolist()\n",
}


@pytest.mark.parametrize("name", sorted(CUT_OR_NOT))
def test_class_shapes_decide_as_the_whole_file_does(name):
    text = CUT_OR_NOT[name]
    text = text.replace("\nclass A", "".join(FILLER.format(n=n) for n in range(4)) + "\n\nclass A", 1)
    check_equivalent(text)
    # With the trailing filler methods too: the cut must stop where the class stops.
    check_equivalent(text + "".join(FILLER.format(n=n) for n in range(4, 6)))


def test_class_shapes_that_cannot_be_cut_are_left_whole():
    for name in ("one_line_body", "backslash", "bracket_line", "dedented_bracket_line", "matmul"):
        text = CUT_OR_NOT[name]
        interiors = string_interiors(text)
        [block] = [b for b in top_level_blocks(text, interiors) if b.kind == "class"]
        assert class_members(text, block, interiors, [a for a, _ in interiors]) is None, name
    for name in ("tabs", "one_space", "tab_after_spaces", "long_header", "decorated_class", "odd_comments", "docstring_and_else"):
        text = CUT_OR_NOT[name]
        interiors = string_interiors(text)
        [block] = [b for b in top_level_blocks(text, interiors) if b.kind == "class"]
        assert class_members(text, block, interiors, [a for a, _ in interiors]) is not None, name


def test_a_statement_cut_at_column_zero_into_two_kept_blocks_is_read_whole():
    """Both halves are kept ("other" blocks parse together), but the chains would read the
    lambda's block and the access's as two: the second half does not balance its brackets."""
    text = with_filler("""
        import jax

        if True: fast = jax.jit(lambda a: g(a,
        not a.item()))

        def g(a, b):
            return a
    """)
    text = text.replace("\n    not a.item", "\nnot a.item")
    assert "\nnot a.item()))" in text
    assert RULE.check(whole(text))
    assert same_findings(text)
    assert partial_context(lazy(text)) is None


def test_a_class_block_names_the_defs_under_its_statements():
    """A def under an `if` in a class body that is not cut (here: a bracket's line dedented
    past the body) resolves by its name."""
    text = with_filler("""
        import jax

        class Model:
            if True:
                def hidden(x):
                    return x.item()
            x = (1,
          2)

        fast = jax.jit(hidden)
    """)
    interiors = string_interiors(text)
    [block] = [b for b in top_level_blocks(text, interiors) if b.kind == "class"]
    assert class_members(text, block, interiors, [a for a, _ in interiors]) is None
    assert RULE.check(whole(text))
    assert same_findings(text)
    assert not decided_clean(lazy(text))


SNIPPETS = [
    # Members at 4 spaces, each named m<n>; {m}: another member's number, so that chains form.
    "    def m{n}(self, x):\n        return x + {n}\n",
    "    def m{n}(self, x):\n        return x.item()\n",
    "    @jax.jit\n    def m{n}(x):\n        return x + {n}\n",
    "    @jax.jit\n    def m{n}(x):\n        return x.tolist()\n",
    "    def m{n}(self, x):\n        return jax.jit(self.m{m})(x)\n",
    "    def m{n}(self, x):\n        return jax.vmap(self.m{m})(x)\n",
    "    def m{n}(self, x):\n        y = self.m{m}(x, x).item()\n        return y\n",
    "    @jax.jit\n    def m{n}(self, x):\n        return self.m{m}(x, x).tolist()\n",
    "    def m{n}(self):\n        def f(x):\n            return x.devices()\n        return jax.jit(f)\n",
    "    m{n} = jax.jit(lambda x: x.sharding)\n",
    "    m{n} = jax.jit(m{m})\n",
    "    m{n} = {n}\n",
    "    @property\n    def m{n}(self):\n        return self.m{m}\n",
    "    # a comment {n}\n",
    '    """A string {n}:\n    def m{m}(self):\n        return x.item()\n    """\n',
    "    def m{n}(self,\n                 x):\n        y = (x +\n             1)\n        return y.item()\n",
    "    if {n}:\n        def m{n}(x):\n            return x.item()\n",
    "    class m{n}:\n        @jax.jit\n        def inner(x):\n            return x.item()\n",
    "    def m{n}(self):\n        import numpy as np{n}\n        return np{n}\n",
    "    def m{n}(self, x):\n        return np{m}.asarray(x)\n",
    "    @staticmethod\n    def m{n}(x):\n        return m{m}(x)\n",
]
MODULE_TAILS = [
    "",
    "\n\nfast = jax.jit(m{m})\n",
    "\n\ndef m{m}(x):\n    return x.item()\n\n\n@jax.jit\ndef module_step(x):\n    return m{m}(x)\n",
    "\n\n@jax.jit\ndef module_step(x):\n    return Model().m{m}(x)\n",
]


def random_class_module(seed: int) -> str:
    """A module with a class assembled at random from ``SNIPPETS`` (skips an invalid one)."""
    rng = random.Random(seed)
    count = rng.randint(3, 14)
    members = [rng.choice(SNIPPETS).format(n=n, m=rng.randrange(count)) for n in range(count)]
    tail = rng.choice(MODULE_TAILS).format(m=rng.randrange(count))
    text = "import jax\n\n" + "".join(FILLER.format(n=n) for n in range(2)) + "\n\nclass Model:\n" + "\n".join(members) + tail
    try:
        ast.parse(text)
    except SyntaxError:
        pytest.skip("an invalid assembly")
    return text


@pytest.mark.parametrize("seed", range(150))
def test_random_classes_decide_as_the_whole_file_does(seed):
    """Classes assembled at random from the shapes above (methods reached through `self`,
    decorators, class attributes, nested classes, strings, continued lines, imports): the
    partial reading finds what the whole-file analysis finds, and decides "no finding" only
    where it agrees."""
    check_equivalent(random_class_module(seed))


def test_a_display_receiver_is_decided_without_the_value_analysis():
    """`np.array([jax.local_devices()[0]])` in a trace: the consumer's argument is a list, which the
    value analysis never calls a tracer; the partial reading decides it alone."""
    text = with_filler("""
        import jax
        import numpy as np

        @jax.jit
        def step(x):
            devices = np.array([jax.local_devices()[0]])
            return x + len(devices)
    """)
    every = whole(text)
    [receiver] = [
        n.args[0] for n in ast.walk(every.tree) if isinstance(n, ast.Call) and ast.unparse(n.func) == "np.array"
    ]
    assert not every.analysis.is_tracer(receiver)
    ctx = lazy(text)
    assert RULE.check(ctx) == [] and not ctx.has_tree
    check_equivalent(text)


MORE_CLASS_SHAPES = {
    # A class attribute that jits a method by its bare name: the analysis resolves no method so.
    "attribute_jits_a_method": "import jax\n\nclass A:\n    def g(self, x):\n        return x.item()\n    fast = jax.jit(g)\n",
    # `jax.jit(self.f)` of a static method: decorated, so not the analysis's `self` method.
    "self_static_method": (
        "import jax\n\nclass A:\n    @staticmethod\n    def f(x):\n        return x.item()\n\n"
        "    def run(self, x):\n        return jax.jit(self.f)(x)\n"
    ),
    # A method defined twice, the access in the second.
    "defined_twice": (
        "import jax\n\nclass A:\n    def f(self, x):\n        return x\n\n    def f(self, x):\n        return x.tolist()\n\n"
        "    def run(self, x):\n        return jax.jit(self.f)(x)\n"
    ),
    # `cls.f` in a class method.
    "class_method": (
        "import jax\n\nclass A:\n    def f(cls, x):\n        return x.devices()\n\n"
        "    @classmethod\n    def run(cls, x):\n        return jax.jit(cls.f)(x)\n"
    ),
    # An import at class level, a consumer through it in a jitted method.
    "class_level_import": (
        "import jax\n\nclass A:\n    import numpy as np\n\n    def f(self):\n        return 1\n\n"
        "    @jax.jit\n    def g(x):\n        return np.asarray(x)\n"
    ),
    # A lambda class attribute jitted through `self`.
    "lambda_attribute_through_self": (
        "import jax\n\nclass A:\n    f = lambda self, x: x.item()\n\n    def run(self, x):\n        return jax.jit(self.f)(x)\n"
    ),
    # Two classes with a method of the same name; only one of them is jitted through `self`.
    "same_name_two_classes": (
        "import jax\n\nclass A:\n    def step(self, x):\n        return x.item()\n\nclass B:\n    def step(self, x):\n"
        "        return x\n\n    def run(self, x):\n        return jax.jit(self.step)(x)\n"
    ),
    # The jitted method's class is the other one: the access is in the class that is not entered.
    "same_name_other_class_jitted": (
        "import jax\n\nclass A:\n    def step(self, x):\n        return x\n\n    def run(self, x):\n"
        "        return jax.jit(self.step)(x)\n\nclass B:\n    def step(self, x):\n        return x.item()\n"
    ),
    # A module-level function named like a method is called from the jitted method.
    "module_helper_from_method": (
        "import jax\n\ndef helper(x):\n    return x.tolist()\n\nclass A:\n    def helper(self, x):\n        return x\n\n"
        "    @jax.jit\n    def run(x):\n        return helper(x)\n"
    ),
    # A triple-quoted string that closes on a line at the body's indentation.
    "string_closing_at_body_level": (
        'import jax\n\nclass A:\n    def f(self):\n        s = """\n    def fake(self):\n    """\n        return s\n\n'
        "    @jax.jit\n    def g(x):\n        return x.item()\n"
    ),
    # A method whose header's parameters go on over several lines at the body's indentation.
    "parameters_at_body_level": "import jax\n\nclass A:\n    @jax.jit\n    def g(x,\n    y):\n        return x.item()\n",
    # A decorator with a lambda holding the access.
    "decorator_lambda": (
        "import jax\n\nclass A:\n    @jax.custom_jvp\n    @staticmethod\n    def f(x):\n        return x\n\n"
        "    g = jax.jit(lambda x: x.item())\n"
    ),
}


@pytest.mark.parametrize("name", sorted(MORE_CLASS_SHAPES))
def test_more_class_shapes_decide_as_the_whole_file_does(name):
    text = MORE_CLASS_SHAPES[name].replace("\nclass A", "".join(FILLER.format(n=n) for n in range(4)) + "\n\nclass A", 1)
    for variant in (text, in_a_test_class(text.replace("class A:\n", "class A:\n    # members\n", 1))):
        check_equivalent(variant)


def test_brackets_balance_agrees_with_counting_the_code():
    """The shortcut for text without brackets or quotes answers what the full count does."""
    import random
    import re

    short = re.compile(r"""#[^\n]*|"[^"\\\n]*(?:\\.[^"\\\n]*)*"|'[^'\\\n]*(?:\\.[^'\\\n]*)*'""")
    chooser = random.Random(7)
    checked = 0
    for _ in range(5000):
        text = "".join(chooser.choice("ab ()[]{}'\"#\n\\x=") for _ in range(chooser.randint(0, 24)))
        interiors = string_interiors(text)
        if interiors is None:
            continue
        parts, position = [], 0
        for first, last in interiors:
            parts.append(text[position:first])
            position = last
        code = short.sub("", "".join([*parts, text[position:]]))
        expected = "'" not in code and '"' not in code and all(code.count(a) == code.count(b) for a, b in ("()", "[]", "{}"))
        assert brackets_balance(text, 0, len(text), interiors, [a for a, _ in interiors]) == expected, repr(text)
        checked += 1
    assert checked > 3000


def test_the_engine_runs_jax001_after_the_rules_that_parse_the_whole_file(monkeypatch):
    """A file a DLPack rule parses whole anyway: JAX001 reads that tree, not parts first
    (the partial reading would only add to the parse), and finds what it finds either way."""
    from jax_codemod.engine.pipeline import check_order

    text = with_filler("""
        import jax
        import torch

        @jax.jit
        def step(x):
            return x.item()

        def export(y):
            return torch.from_dlpack(jax.device_put(y))
    """)  # (a placement word: else JAX002 decides from the text that nothing spans devices)
    assert check_order([RULE, ShardedDlpackExport()])[-1] is RULE
    assert check_order([ShardedDlpackExport(), RULE])[-1] is RULE
    partial_readings = []
    original = partial_reading.read
    monkeypatch.setattr(partial_reading, "read", lambda *a, **k: partial_readings.append(a) or original(*a, **k))
    _, both = check_source(text.encode(), "case.py", [RULE, ShardedDlpackExport()])
    assert partial_readings == []
    _, alone = check_source(text.encode(), "case.py", [RULE])
    assert len(partial_readings) == 1  # without a rule that parses it whole, JAX001 reads parts
    assert [f.code for f in both] == [f.code for f in alone] == ["JAX001"]


# The mechanism as any rule declares it -----------------------------------------------------


MARKER_CALL, TRACED_DECORATOR = re.compile(r"marker\("), re.compile(r"@traced\b")


class MarkerRule(Rule):  # a rule of the test's own, on the contract alone
    """Reports every call of `marker(...)` inside a function decorated `@traced`; reads a file
    in parts: the blocks that call `marker` are its targets, those that say `traced` its roots."""

    CODE, NAME, TRIGGERS = "TST001", "marker", (b"marker",)
    PARTS = Parts(
        relevant=lambda cut, base, bindings: (cut.matching(MARKER_CALL), cut.matching(TRACED_DECORATOR)),
        cuts_class=lambda text, begin, finish: "marker" in text[begin:finish],
    )

    def __init__(self, options=None):
        super().__init__(options)
        self.judged = []  # the texts of the readings clean_in was asked about (released after)

    def check(self, ctx):
        if self.clean_from_parts(ctx):
            return []
        found = []
        for node in ast.walk(ctx.tree):
            if isinstance(node, ast.FunctionDef) and any(ast.unparse(d) == "traced" for d in node.decorator_list):
                calls = [n for n in ast.walk(node) if isinstance(n, ast.Call) and ast.unparse(n.func) == "marker"]
                found += [self.finding(ctx, call, "marker in a traced function", FixSafety.NONE) for call in calls]
        return found

    def clean_in(self, reading):
        self.judged.append(reading.context.text)
        return not self.check(reading.context)  # the partial tree is parsed: its own check


MARKED = with_filler("""
    from lib import traced, marker

    def helper(x):
        return marker(x)

    @traced
    def step(x):
        return helper(x)
""")


def test_any_rule_can_declare_a_partial_reading():
    rule = MarkerRule()
    assert rule.check(whole(MARKED)) == []  # `marker` is in `helper`, which is not decorated
    ctx = lazy(MARKED)
    assert rule.check(ctx) == [] and not ctx.has_tree
    [judged] = rule.judged
    # The chain `step` -> `helper` is kept, the filler stubbed, at the file's lines.
    assert "return helper(x)" in judged and "return marker(x)" in judged
    assert "def unrelated_0" not in judged
    check_partial_text(MARKED, judged)
    # Not on a chain from a root: decided without asking the rule.
    rule.judged.clear()
    unreached = MARKED.replace("@traced\n", "")
    assert rule.check(lazy(unreached)) == [] and rule.judged == []
    # A finding: the reading cannot prove the file clean, and the whole tree gives it.
    marked = MARKED.replace("def helper(x):", "@traced\ndef helper(x):")
    ctx = lazy(marked)
    [finding] = rule.check(ctx)
    assert ctx.has_tree and finding.line == marked.count("\n", 0, marked.index("marker(x)")) + 1


def test_the_engine_runs_a_rule_that_reads_parts_after_the_others():
    from jax_codemod.engine.pipeline import check_order

    rule = MarkerRule()
    assert check_order([rule, ShardedDlpackExport()])[-1] is rule
    _, findings = check_source(MARKED.replace("def helper(x):", "@traced\ndef helper(x):").encode(), "m.py", [rule])
    assert [f.code for f in findings] == ["TST001"]


def test_an_undecided_or_failing_reading_reads_the_file_whole():
    text = MARKED
    undecided = dataclasses.replace(MarkerRule.PARTS, relevant=lambda cut, base, bindings: None)
    assert partial_reading.read(lazy(text), undecided) is None
    assert not partial_reading.proven_clean(lazy(text), undecided, lambda reading: True)
    broken = dataclasses.replace(MarkerRule.PARTS, relevant=lambda cut, base, bindings: 1 / 0)
    ctx = lazy(text)
    assert not partial_reading.proven_clean(ctx, broken, lambda reading: True) and not ctx.has_tree
    assert not partial_reading.proven_clean(lazy(text), MarkerRule.PARTS, lambda reading: 1 / 0)
    assert partial_reading.proven_clean(lazy(text), MarkerRule.PARTS, lambda reading: True)
    # A rule without a declaration never reads parts; nor one whose file is parsed already.
    assert not ShardedDlpackExport().clean_from_parts(lazy(text))
    assert not MarkerRule().clean_from_parts(whole(text))


def test_a_judged_reading_is_freed_at_once_not_by_the_cyclic_collector():
    # JAX001 caches its tracing on the partial context, which refers back to it: a cycle that
    # held every judged partial tree until the engine's collection pass walked it (a tenth of
    # a cold run's collections). proven_clean releases the reading once it is judged.
    text = with_filler("""
        import jax
        import numpy as np

        @jax.jit
        def step(x):
            return host(x.shape)

        def host(shape):
            return np.asarray(shape)
    """)
    judged = []

    def clean(reading):
        judged.append(weakref.ref(reading.context))
        answer = RULE.clean_in(reading)
        assert tracing_for(reading.context).ctx is reading.context  # the cycle
        return answer

    enabled = gc.isenabled()
    gc.disable()
    try:
        partial_reading.proven_clean(lazy(text), RULE.PARTS, clean)
        assert len(judged) == 1 and judged[0]() is None
    finally:
        if enabled:
            gc.enable()


# A traced method's `self.hook(x)` runs an override in a subclass of the file (analysis.classes):
# the chains treat the classes related by their bases as one scope, so they reach it.
OVERRIDES = {
    "override": """
        import functools
        import jax
        import numpy as np

        class Trainer:
            @functools.partial(jax.jit, static_argnums=0)
            def step(self, x):
                return self.on_batch(x)

            def on_batch(self, x):
                return x

        class NumpyTrainer(Trainer):
            def on_batch(self, x):
                return np.asarray(x)
    """,
    "super_of_an_uncut_base": """
        import functools
        import jax

        class Base:
            def prepare(self, x):
                return memoryview(x)

        class Child(
            Base,
        ):
            @functools.partial(jax.jit, static_argnums=0)
            def run(self, x):
                return super().prepare(x)
    """,
}


@pytest.mark.parametrize("name", sorted(OVERRIDES))
def test_a_method_that_another_class_of_the_file_may_run_keeps_its_finding(name):
    text = with_filler(OVERRIDES[name])
    [finding] = same_findings(text)
    assert "called from inside the traced" in finding.message
    assert not decided_clean(lazy(text))
    # Read in parts: the related classes are one scope, so the chain reaches the override.
    partial = partial_context(lazy(text))
    assert partial is None or "return np.asarray(x)" in partial.text or "memoryview(x)" in partial.text
    # Without the subclass relation the chains decide it as before: the hook is no override.
    unrelated = text.replace("class NumpyTrainer(Trainer):", "class NumpyTrainer:").replace("    Base,\n", "")
    assert not same_findings(unrelated)
    assert partial_context(lazy(unrelated)) is not None


def test_class_groups_are_the_files_hierarchies():
    text = textwrap.dedent(
        """
        import torch

        class Base:
            def hook(self, x):
                return x.item()

        class Child(Base, torch.nn.Module):
            def hook(self, x):
                return x.tolist()

        class Alone(torch.nn.Module):
            def hook(self, x):
                return x.tolist()

        class Generic[T](Base):
            pass
        """
    )
    blocks, cut = member_cut(text)
    [group] = partial_reading.class_groups(blocks, cut.text)
    assert sorted((blocks[first].name, blocks[first].kind) for first, _ in group) == [
        ("Base", "head"),
        ("Child", "head"),
        ("Generic", "class"),
    ]
    # The group is one scope: a method of Base is named from Child's and Generic's blocks.
    scopes = {cut.member_of[first] for first, _ in group}
    assert len(scopes) == 1 and None not in scopes


# Classes all cut into their members form one scope with the classes their bases relate them to:
# a traced method's chain reaches the overrides of its hooks, so the file needs no whole reading.
CUT_HIERARCHY = """
    import functools
    import jax
    import numpy as np

    class Trainer:
        @functools.partial(jax.jit, static_argnums=0)
        def step(self, x):
            return self.on_batch(x)

        def on_batch(self, x):
            return x

        def report(self, y):
            return np.asarray(y)

    class Middle(Trainer):
        def unrelated(self, y):
            return np.asarray(y)

    class NumpyTrainer(Middle):
        def on_batch(self, x):
            return np.asarray(x)

        def summary(self, y):
            return np.asarray(y)
"""


def test_a_cut_hierarchy_is_read_in_parts_and_keeps_the_overrides_finding():
    text = with_filler(CUT_HIERARCHY)
    [finding] = same_findings(text)
    assert "called from inside the traced" in finding.message
    assert not decided_clean(lazy(text))
    partial = partial_context(lazy(text))
    assert partial is not None  # in parts, not whole
    # The middle class, none of whose methods is on the chain, keeps its header: its base.
    assert "class Middle(Trainer):" in partial.text
    # With the override gone the same reading proves the file clean.
    fine = text.replace("return np.asarray(x)", "return x")
    assert not same_findings(fine)
    assert decided_clean(lazy(fine))
