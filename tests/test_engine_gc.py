"""A file's tree is freed by reference counting when it is done, before the collection pass.

Every object allocated while collection is paused is young, so a pass that runs with the tree
still alive (or kept alive by a cycle such as an analysis cached on its context) walks all of it.
"""

from __future__ import annotations

import gc
import weakref
from pathlib import Path
from typing import ClassVar

from jax_codemod.engine.pipeline import Settings, process_source
from jax_codemod.rule import FixSafety, Rule


class _Analysis:
    unfinished = ()  # the functions the value analysis gave up on: none here
    def __init__(self, ctx) -> None:
        self.ctx = ctx  # back to its context: a cycle, as a shared analysis cached on ctx makes


class CyclicRule(Rule):
    CODE = "TST001"
    NAME = "test-cyclic"
    TRIGGERS = (b"needle",)
    trees: ClassVar[list] = []

    def check(self, ctx):
        ctx.__dict__["analysis"] = _Analysis(ctx)
        CyclicRule.trees.append(weakref.ref(ctx.tree))
        call = ctx.tree.body[0].value
        return [self.finding(ctx, call, "found", FixSafety.NONE)]


def test_the_tree_is_gone_before_the_collection_pass_runs():
    CyclicRule.trees = []
    alive_at_collection: list[bool] = []

    def watch(phase, info):
        if phase == "start" and CyclicRule.trees:
            alive_at_collection.append(CyclicRule.trees[-1]() is not None)

    gc.callbacks.append(watch)
    try:
        result = process_source(b"needle(1)\n" * 200, "m.py", Settings((CyclicRule(),)))
    finally:
        gc.callbacks.remove(watch)
    assert [f.line for f in result.findings] == [1]
    assert CyclicRule.trees and CyclicRule.trees[0]() is None
    assert alive_at_collection and not any(alive_at_collection)


def test_freed_by_reference_counting_alone():
    CyclicRule.trees = []
    gc.disable()
    try:
        process_source(b"needle(1)\n", "m.py", Settings((CyclicRule(),)))
        assert CyclicRule.trees[0]() is None
    finally:
        gc.enable()


def _cyclic_garbage_of(source: bytes, rules) -> list[str]:
    """The tool's own objects that only the cyclic collector would free after ``source``."""
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        process_source(source, "m.py", Settings(tuple(rules)))
        gc.collect()
        return sorted({type(o).__name__ for o in gc.garbage if type(o).__module__.startswith("jax_codemod")})
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


def test_the_real_rules_leave_no_cycle_behind():
    # The shared analysis, its resolver and tracing answer, and a partial reading's contexts
    # are all reachable from the file's context: none of them may refer back to itself, or the
    # whole tree waits for the collector (a resolver holding the analysis' bound methods did).
    from jax_codemod.rules import RULES

    source = (Path(__file__).parent / "snapshots" / "sharded_dlpack_export").glob("rewrite_*.py")
    texts = [path.read_bytes() for path in sorted(source)][:5]
    texts += [(Path(__file__).parent / "snapshots" / "traced_concrete_access" / "rewrite_method.py").read_bytes()]
    for text in texts:
        assert _cyclic_garbage_of(text, [rule() for rule in RULES]) == []


def test_every_context_the_real_rules_make_is_freed_with_its_file(monkeypatch):
    # The capsule analysis (JAX005) was kept in a table keyed weakly by its context, but it
    # refers back to the context: neither was ever freed, nor the file's tree and values.
    from jax_codemod.analysis.context import FileContext
    from jax_codemod.rules import RULES

    made: list[weakref.ref] = []
    original = FileContext.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        made.append(weakref.ref(self))

    monkeypatch.setattr(FileContext, "__init__", init)
    snapshots = Path(__file__).parent / "snapshots"
    texts = [path.read_bytes() for path in sorted((snapshots / "removed_dlpack_api").glob("rewrite_*.py"))[:4]]
    gc.collect()
    gc.disable()
    try:
        for text in texts:
            process_source(text, "m.py", Settings(tuple(rule() for rule in RULES)))
        assert made and [ref for ref in made if ref() is not None] == []
    finally:
        gc.enable()
