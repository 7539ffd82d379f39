"""The chains of JAX001's partial reading (``analysis.partial._chains``) against the reading
they were first written as: forward from every root through every word of every block reached
(the regex's words), then back from the targets through ``Cut.naming`` of each kept block's
functions over the whole text, and each decorator factory's name searched in the whole text.
``_chains`` reads each reached block's words once and answers the rest from them. The kept
blocks must be the same, exactly: a block the plain reading kept and ``_chains`` does not
would make the partial tree miss a chain, and a file proven clean that is not."""

from __future__ import annotations

import ast
import importlib.util
import random
import textwrap
from pathlib import Path

import pytest
from jax_codemod.analysis import partial as partial_reading
from jax_codemod.analysis.context import FileContext
from jax_codemod.analysis.partial import Cut, _chains, _run, _too_much, reached
from jax_codemod.rules.traced_concrete_access import TracedConcreteAccess
from test_traced_concrete_access_partial import forward_reach as plain_forward_reach

RULE = TracedConcreteAccess()
TESTS = Path(__file__).parent


def _installed_jax() -> list[Path]:
    spec = importlib.util.find_spec("jax")  # found, not imported: only its files are read
    if spec is None or spec.origin is None:
        return []
    return sorted((Path(spec.origin).parent / "_src").rglob("*.py"))


FILES = sorted([*(TESTS / "realworld").rglob("*.py"), *(TESTS.parent / "examples").rglob("*.py")])[::2] + _installed_jax()[::6]


def forward_reach(cut: Cut, roots: set[int]) -> set[int]:
    """Every block a chain from ``roots`` reaches: forward, through every word of a reached
    block's text that names a function some block defines (the partial tests' plain reading)."""
    return plain_forward_reach(cut.text, cut.blocks, roots, cut)


def forward_chains(cut: Cut, roots: set[int], targets: set[int], fixed: list[bool], most) -> list[bool] | None:
    """The kept blocks as the plain reading chose them."""
    blocks = cut.blocks
    reach = forward_reach(cut, roots)
    keep = [fixed[i] or (i in targets and i in reach) for i in range(len(blocks))]
    if keep != fixed and _too_much(cut, keep, most):
        return None
    names_done: set[tuple] = set()
    pending = [i for i in range(len(blocks)) if keep[i] and i in reach]
    while pending:
        for name, within in cut.defines(pending.pop()):
            if (name, within) in names_done:
                continue
            names_done.add((name, within))
            for other in cut.naming(name, within=within):
                if other in reach and not keep[other]:
                    keep[other] = True
                    pending.append(other)
    for heads in cut.group_heads:
        if any(keep[i] for first in heads for i in _run(cut, first)):
            for first in heads:
                keep[first] = True
    factories = [i for i in roots if not keep[i] and blocks[i].kind == "def" and not blocks[i].decorated and not blocks[i].indent]
    kept = list(keep)
    for index in factories:
        if any(kept[i] for i in cut.naming(blocks[index].name, strings=True)):
            keep[index] = True
    return keep


def compare(cut: Cut, roots: set[int], targets: set[int], fixed: list[bool], most=None) -> bool:
    """Asserts ``reached`` and ``_chains`` answer what the plain reading answers; whether a
    target is reached."""
    found = bool(targets & forward_reach(cut, roots))
    assert reached(cut, roots, targets) == found
    if found:
        assert _chains(cut, roots, targets, list(fixed), most) == forward_chains(cut, roots, targets, list(fixed), most)
    return found


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_the_chains_keep_what_the_plain_reading_keeps(path):
    """Random roots, targets and fixed blocks on real files' blocks (classes cut into their
    members, as the rule cuts them): the same blocks kept, the same answer to ``reached``.
    Roots are module-level functions as often as not (decorator factories)."""
    text = path.read_text(encoding="utf-8")
    cut = Cut.of(text, RULE.PARTS.cuts_class)
    if cut is None:
        return
    chooser = random.Random(path.name)
    size = len(cut.blocks)
    kept_some = 0
    for _ in range(10):
        roots = {i for i in range(size) if chooser.random() < chooser.choice((0.02, 0.1, 0.3))}
        if chooser.random() < 0.5:
            roots |= {i for i, b in enumerate(cut.blocks) if b.kind == "def" and not b.indent and chooser.random() < 0.3}
        targets = {i for i in range(size) if chooser.random() < chooser.choice((0.02, 0.1))} or {size - 1}
        # The fixed blocks as the reading has them ("other" ones: those that define functions
        # under an `if` matter), and a few more.
        fixed = [b.kind == "other" or chooser.random() < 0.05 for b in cut.blocks]
        kept_some += compare(cut, roots, targets, fixed)
        for target in list(targets)[:2]:
            compare(cut, roots, {target}, fixed)


def test_the_corpus_files_reach_their_targets():
    """The comparison above is not vacuous: most of its files have chains to keep."""
    found = 0
    for path in FILES[:40]:
        cut = Cut.of(path.read_text(encoding="utf-8"), RULE.PARTS.cuts_class)
        if cut is not None and len(cut.blocks) > 3:
            found += compare(cut, set(range(0, len(cut.blocks), 3)), {len(cut.blocks) - 1}, [False] * len(cut.blocks))
    assert found >= 5


def lazy(text: str, path: str) -> FileContext:
    return FileContext(path, text, parse=lambda: ast.parse(text))


def cut_of(source: str) -> Cut:
    """``source`` cut, every class into its members."""
    cut = Cut.of(textwrap.dedent(source), lambda text, begin, finish: True)
    assert cut is not None
    return cut


def index_of(cut: Cut, name: str) -> int:
    return next(i for i, b in enumerate(cut.blocks) if b.name == name)


def test_a_chain_through_a_fixed_block_keeps_its_callers():
    """A fixed block (kept whatever the rule says) that defines a function under an `if` and
    that a root reaches keeps the reached blocks that call it, as the plain reading does."""
    cut = cut_of(
        """
        import jax

        if True:
            def helper(x):
                return x

        def target(x):
            return x.item()

        def runner(x):
            return helper(x)

        def root(x):
            return jax.jit(runner)(x) + target(x)
        """
    )
    fixed = [b.kind == "other" for b in cut.blocks]
    root, target, runner = index_of(cut, "root"), index_of(cut, "target"), index_of(cut, "runner")
    assert compare(cut, {root}, {target}, fixed)
    keep = _chains(cut, {root}, {target}, fixed, None)
    assert keep[runner] and keep[root] and keep[target]


def test_a_name_in_a_docstring_chains_forward_but_not_back():
    """The forward reading follows a name wherever a block's text holds it (a docstring too),
    the walk back from a kept function only a name in code: a block that names a kept function
    in its docstring only is reached (a root here), but not kept for it."""
    cut = cut_of(
        '''
        import jax

        def target(x):
            return x.item()

        def documented(x):
            """Like target, traced."""
            return jax.jit(lambda y: y)(x)

        def caller(x):
            return target(x)

        def root(x):
            return jax.jit(caller)(x)
        '''
    )
    root, target = index_of(cut, "root"), index_of(cut, "target")
    documented, caller = index_of(cut, "documented"), index_of(cut, "caller")
    fixed = [b.kind == "other" for b in cut.blocks]
    assert compare(cut, {root, documented}, {target}, fixed)
    keep = _chains(cut, {root, documented}, {target}, fixed, None)
    assert keep[target] and keep[caller] and keep[root] and not keep[documented]


def test_a_decorator_factory_named_by_a_kept_block_is_kept():
    """A module-level function among the roots that a kept block names, in code or a string,
    reached or only fixed, is kept (a decorator factory); one no kept block names is not."""
    cut = cut_of(
        """
        import jax

        def compile(fn):
            return jax.jit(fn)

        def unused(fn):
            return jax.jit(fn)

        if True:
            LATER = "compile_later"

        def compile_later(fn):
            return jax.jit(fn)

        @compile
        def target(x):
            return x.item()
        """
    )
    target = index_of(cut, "target")
    compile_, unused, later = index_of(cut, "compile"), index_of(cut, "unused"), index_of(cut, "compile_later")
    fixed = [b.kind == "other" for b in cut.blocks]
    roots = {target, compile_, unused, later}
    assert compare(cut, roots, {target}, fixed)
    keep = _chains(cut, roots, {target}, fixed, None)
    assert keep[compile_] and keep[later] and not keep[unused]


def test_a_method_is_reached_from_its_class_only():
    """`self.step` names the method `step` of its own class only: a block of another class
    that names `step` reaches nothing (and is no caller the walk back finds)."""
    cut = cut_of(
        '''
        import jax

        class A:
            def step(self, x):
                return x.item()

            def run(self, x):
                return jax.jit(self.step)(x)

        class B:
            def go(self, x):
                return jax.jit(self.step)(x)
        '''
    )
    step, run, go = index_of(cut, "step"), index_of(cut, "run"), index_of(cut, "go")
    assert compare(cut, {run}, {step}, [False] * len(cut.blocks))
    assert not compare(cut, {go}, {step}, [False] * len(cut.blocks))


def test_the_reading_keeps_what_it_kept_on_the_corpus():
    """End to end: ``read`` keeps, on each real file, the blocks the plain reading keeps
    (``_chains`` replaced by it gives the same partial text)."""
    checked = 0
    for path in FILES:
        text = path.read_text(encoding="utf-8")
        if not RULE.prefilter(path.read_bytes()):
            continue
        reading = partial_reading.read(lazy(text, str(path)), RULE.PARTS)
        original = partial_reading._chains
        try:
            partial_reading._chains = forward_chains
            forward = partial_reading.read(lazy(text, str(path)), RULE.PARTS)
        finally:
            partial_reading._chains = original
        assert (reading is None) == (forward is None)
        if reading is not None:
            assert reading.may_matter == forward.may_matter
            assert reading.context.text == forward.context.text
            checked += reading.may_matter
    assert checked >= 3


def test_a_file_that_spells_no_transform_is_decided_without_walking(monkeypatch):
    """Access text but no block that may spell a transform (no root): the reading says the file
    has nothing for the rule at once, as the walk back from its targets would (it finds no
    root where there is none), and neither walks nor searches the class names."""
    text = textwrap.dedent(
        """
        import numpy as np

        class Model:
            def run(self, x):
                return np.asarray(x).item()

        def helper(x):
            return x.item()

        model = Model()
        value = helper(model.run(1))
        """
    )
    # (Both functions are named elsewhere: the rule's targets.)
    targets, roots = RULE.PARTS.relevant(*_base_of(text))
    assert targets and not roots

    def refuse(*args):
        raise AssertionError("walked")

    monkeypatch.setattr(partial_reading, "reached", refuse)
    monkeypatch.setattr(partial_reading, "_named_classes", refuse)
    reading = partial_reading.read(lazy(text, "case.py"), RULE.PARTS)
    assert reading is not None and not reading.may_matter
    assert RULE.check(lazy(text, "case.py")) == []


def _base_of(text: str):
    """(cut, base, bindings) as ``read`` hands them to ``Parts.relevant``."""
    ctx = lazy(text, "case.py")
    cut = Cut.of(text, RULE.PARTS.cuts_class)
    fixed, replacements = partial_reading._always_kept(cut, RULE.PARTS.unliftable)
    base = partial_reading._parse_kept(ctx, cut.blocks, fixed, replacements)
    return cut, base, base._bindings


@pytest.mark.parametrize("path", FILES[::4], ids=lambda p: p.name)
def test_without_roots_no_target_is_reached(path):
    """What the shortcut relies on, on real files: ``reached`` with no root is False."""
    cut = Cut.of(path.read_text(encoding="utf-8"), RULE.PARTS.cuts_class)
    if cut is None:
        return
    assert not reached(cut, set(), set(range(len(cut.blocks))))
