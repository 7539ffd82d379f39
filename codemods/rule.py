"""The contract every rule implements, and the values rules hand to the engine."""

from __future__ import annotations

import ast
import enum
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from jax_codemod.analysis.span import Span  # part of the rule contract: rules import it from here

if TYPE_CHECKING:
    import libcst as cst
    from jax_codemod.analysis.context import FileContext
    from jax_codemod.analysis.partial import Parts, Reading
    from jax_codemod.engine.fixer import Fixer


class FixSafety(str, enum.Enum):
    """How much a fix may be trusted; ruff's vocabulary."""

    SAFE = "safe"
    UNSAFE = "unsafe"
    NONE = "none"


@dataclass(frozen=True)
class Finding:
    """One occurrence of an anti-pattern.

    ``span`` anchors the fix: the engine hands the rule the libcst node of type
    ``node_type`` that covers exactly this span. ``applied`` (this finding's own rule made
    the edit) and ``resolved_by`` (the code of another rule whose fix made it moot) are
    filled in by the engine.
    """

    code: str
    name: str
    path: str
    line: int
    column: int
    message: str
    fix: FixSafety
    span: Span
    node_type: str = "Call"
    applied: bool = False
    data: tuple = field(default=(), compare=False)
    resolved_by: str | None = None
    # The errors the flagged code raises (class names): a test that expects one of them
    # (``analysis.expected_errors``) is no finding.
    raises: tuple[str, ...] = field(default=(), compare=False)
    # In a notebook: the cell (1-based, counting every cell), and ``line`` is the line in it.
    cell: int | None = None

    def to_json(self) -> dict:
        """The finding in ``--format json``; ``resolved_by`` is present only when set."""
        document = {
            "code": self.code,
            "name": self.name,
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "message": self.message,
            "fix": self.fix.value,
            "applied": self.applied,
        }
        if self.resolved_by is not None:
            document["resolved_by"] = self.resolved_by
        if self.cell is not None:
            document["cell"] = self.cell
        return document


class Rule:
    """Base class of every rule.

    A rule answers two questions. ``check`` (cheap, on the standard library's ``ast``)
    says where the anti-pattern is and whether it can be fixed; ``rewrite`` (on libcst,
    called only for files that get a fix) replaces the node each fixable finding anchors.
    """

    CODE: ClassVar[str]
    NAME: ClassVar[str]
    DEFAULT_ENABLED: ClassVar[bool] = True
    # The best fix the rule can offer; individual findings may offer less.
    FIX_SAFETY: ClassVar[FixSafety] = FixSafety.SAFE
    # A file that contains none of these byte strings is never parsed for this rule.
    TRIGGERS: ClassVar[tuple[bytes, ...]] = ()
    # ... nor one that lacks any of these: ``prefilter`` passes a file only when it holds every
    # one (a test checks this of every rule). Every rule here needs ``jax`` named in the file,
    # which most files of a mixed tree do not: ``Prefilter`` asks each required string once
    # for all rules, before any trigger.
    REQUIRES: ClassVar[tuple[bytes, ...]] = ()
    # How the rule reads a file in parts (``analysis.partial.Parts``: which top-level blocks
    # its answer depends on), for a rule that can often show from some of them that a file has
    # nothing for it (JAX001); None: it reads the whole tree. Such a rule's ``check`` asks
    # ``clean_from_parts`` first, and ``clean_in`` judges the reading. The engine runs these
    # rules after the ones that read the whole tree, and so they use the tree when one of
    # those has parsed it: reading parts first would only add to that parse.
    PARTS: ClassVar[Parts | None] = None
    # What the flagged code raises (class names), unless a finding says otherwise; and whether
    # it raises only while traced (an eager call of the same function works).
    RAISES: ClassVar[tuple[str, ...]] = ()
    TRACE_ONLY: ClassVar[bool] = False
    # Whether a finding can come from another module of the file's project (a project function
    # that exports its parameter, called here): the engine then asks ``project_prefilter`` of a
    # file ``prefilter`` fails (the manifest records it, so no rule is imported to ask).
    PROJECT_PREFILTER: ClassVar[bool] = False

    def __init__(self, options: dict | None = None) -> None:
        self.options = dict(options or {})

    def prefilter(self, source: bytes) -> bool:
        return all(required in source for required in self.REQUIRES) and any(
            trigger in source for trigger in self.TRIGGERS
        )

    def prefilter_parts(self) -> tuple[tuple[bytes, ...] | None, Callable[[bytes], bool] | None]:
        """How ``Prefilter`` asks this rule: (triggers, refine).

        The rule passes a file when one of ``triggers`` is in it and ``refine`` (if any) says
        yes; ``triggers`` None: ``refine`` alone decides. A rule that keeps the default
        ``prefilter`` is its triggers alone, which ``Prefilter`` tests for all rules at once.
        """
        if type(self).prefilter is Rule.prefilter:
            return tuple(self.TRIGGERS), None
        return None, self.prefilter

    def project_prefilter(self, source: bytes, project) -> bool:
        """Whether a file ``prefilter`` fails may still have a finding through another module of
        its project (``project``: the file's ``analysis.project.View``): a project function
        that exports its parameter, called here. From texts alone (``View.reaches``); the
        engine asks only rules with ``PROJECT_PREFILTER``, and only for files in a project."""
        return False

    def check(self, ctx: FileContext) -> Sequence[Finding]:
        raise NotImplementedError

    def clean_from_parts(self, ctx: FileContext) -> bool:
        """Whether a partial reading of ``ctx``'s file (``PARTS``) proves that ``check`` finds
        nothing there: False without ``PARTS``, once the whole tree is parsed, and on any doubt
        (then ``check`` reads the whole tree). Never parses the whole file itself."""
        if self.PARTS is None or ctx.has_tree:
            return False
        from jax_codemod.analysis import partial

        return partial.proven_clean(ctx, self.PARTS, self.clean_in)

    def clean_in(self, reading: Reading) -> bool:
        """For a rule with ``PARTS``: whether ``reading`` (one whose kept blocks may hold a
        finding: ``reading.may_matter``) shows the file has none. ``reading.context`` is a
        context of the kept blocks, at the file's lines and columns, released when this returns
        (keep nothing of it). Default: cannot tell."""
        return False

    def rewrite(self, original: cst.CSTNode, updated: cst.CSTNode, finding: Finding, fixer: Fixer):
        """Return the replacement for ``updated`` (a node, FlattenSentinel or RemovalSentinel)."""
        raise NotImplementedError

    def finalize(self, module: cst.Module, fixer: Fixer) -> cst.Module:
        """Module-level edits after all rewrites (helpers, imports). Default: none."""
        return module

    # Helpers shared by every rule's check().

    def finding(
        self,
        ctx: FileContext,
        node: ast.AST,
        message: str,
        fix: FixSafety,
        node_type: str = "Call",
        data: tuple = (),
        raises: tuple[str, ...] | None = None,
    ) -> Finding:
        span = ctx.span(node)
        return Finding(
            code=self.CODE,
            name=self.NAME,
            path=ctx.path,
            line=span.start_line,
            column=span.start_column + 1,
            message=message,
            fix=fix,
            span=span,
            node_type=node_type,
            data=data,
            raises=self.RAISES if raises is None else raises,
        )


# Prefilters of a rule set, in one pass ---------------------------------------------------------


def minimal_triggers(triggers: Iterable[bytes]) -> tuple[bytes, ...]:
    """The triggers that contain no other one, in their first order: a file holds one of
    ``triggers`` exactly when it holds one of these (``from_dlpack`` implies ``dlpack``)."""
    unique = list(dict.fromkeys(triggers))
    return tuple(t for t in unique if not any(other != t and other in t for other in unique))


# Below this many bytes Prefilter's gate is one regex search, above it one ``in`` per trigger.
SMALL_FILE = 1024
# Files past the gate between two re-sorts of its scan order by the triggers' hits.
RESORT_EVERY = 32


class Prefilter:
    """Which of ``rules`` may find something in a file, from its bytes: each rule's prefilter,
    answered for all of them together.

    Most files of a tree hold no rule's trigger: a gate of the triggers that contain no other
    (``minimal_triggers`` of all rules') rejects them in one scan per gate trigger, instead of
    one per rule and trigger. A file past the gate is asked per rule, each distinct trigger
    scanned at most once (JAX002 and JAX006 share theirs), one whose contained trigger is
    absent not at all. ``active(source)`` gives the same rules, in order, as
    ``[r for r in rules if r.prefilter(source)]``.
    """

    def __init__(self, rules: Sequence[Rule]) -> None:
        self.rules = tuple(rules)
        self._plan: list[
            tuple[Rule, tuple[bytes, ...], tuple[bytes, ...] | None, Callable[[bytes], bool] | None]
        ] = []
        gated: list[bytes] = []
        self._ungated = False
        each_requires: list[tuple[bytes, ...]] = []
        for rule in self.rules:
            parts = getattr(rule, "prefilter_parts", None)
            triggers, refine = parts() if parts is not None else (None, rule.prefilter)
            # Read from the class or the manifest (``LazyRule`` sets it): never loads a rule.
            requires = tuple(dict.fromkeys(getattr(rule, "REQUIRES", ()) or ()))
            each_requires.append(requires)
            if triggers is None:
                self._ungated = True
                self._plan.append((rule, requires, None, refine))
                continue
            triggers = tuple(sorted(minimal_triggers(triggers), key=len))  # common (short) first
            gated.extend(triggers)
            self._plan.append((rule, requires, triggers, refine))
        # What every rule requires: a file without one of these is no rule's, after one scan.
        self._required_by_all: tuple[bytes, ...] = (
            tuple(r for r in each_requires[0] if all(r in other for other in each_requires[1:]))
            if each_requires
            else ()
        )
        # Shortest first: short words (``array``, ``item``, ``device``) are the common ones, so a
        # file that passes the gate usually stops at its first scans; one that fails scans all.
        self.gate = tuple(sorted(minimal_triggers(gated), key=len))
        # The order the gate is scanned in, commonest hit first as files show it (the answer
        # is the same in any order): re-sorted by the hits every RESORT_EVERY files that pass.
        self._order = self.gate
        self._hits = dict.fromkeys(self.gate, 0)
        self._passed = 0
        # For a small file, one regex search costs less than a loop of ``in`` tests (20,000 files
        # of ~100 bytes: 0.03 s against 0.11 s); for a larger one the ``in`` scans are faster.
        self._gate_pattern = (
            re.compile(b"|".join(re.escape(t) for t in sorted(self.gate, key=len, reverse=True)))
            if self.gate
            else None
        )
        known = list(dict.fromkeys(gated))
        # For each trigger, the gate triggers it contains: absent, it is absent too.
        self._needs = {t: tuple(g for g in self.gate if g != t and g in t) for t in known}

    def active(self, source: bytes) -> tuple[Rule, ...]:
        found: dict[bytes, bool] = {}  # trigger -> in source, each scanned at most once
        for required in self._required_by_all:
            if required not in source:
                return ()  # every rule's prefilter would say no
            found[required] = True
        if not self._ungated:
            if len(source) < SMALL_FILE and self._gate_pattern is not None:
                if self._gate_pattern.search(source) is None:
                    return ()
            else:
                for trigger in self._order:
                    hit = found[trigger] = trigger in source
                    if hit:
                        self._count(trigger)
                        break
                else:
                    return ()
        active = []
        for rule, requires, triggers, refine in self._plan:
            if requires and not self._all_present(source, requires, found):
                continue
            if triggers is not None and not self._any_trigger(source, triggers, found):
                continue
            if refine is None or refine(source):
                active.append(rule)
        return tuple(active)

    def _count(self, trigger: bytes) -> None:
        self._hits[trigger] += 1
        self._passed += 1
        if self._passed % RESORT_EVERY == 0:
            hits = self._hits
            # A new tuple, never one changed in place: a scan in progress keeps the order it read.
            self._order = tuple(sorted(self.gate, key=lambda t: -hits[t]))

    @staticmethod
    def _all_present(source: bytes, requires: tuple[bytes, ...], found: dict[bytes, bool]) -> bool:
        for required in requires:
            present = found.get(required)
            if present is None:
                present = found[required] = required in source
            if not present:
                return False
        return True

    def _any_trigger(self, source: bytes, triggers: tuple[bytes, ...], found: dict[bytes, bool]) -> bool:
        """Whether one of ``triggers`` is in ``source``; ``found`` remembers every scan."""
        for trigger in triggers:
            if found.get(trigger):
                return True  # found by the gate or for an earlier rule: no scan
        for trigger in triggers:
            hit = found.get(trigger)
            if hit is None:
                hit = True
                for contained in self._needs[trigger]:
                    known = found.get(contained)
                    if known is None:
                        known = found[contained] = contained in source
                    if not known:
                        hit = False
                        break
                hit = found[trigger] = hit and trigger in source
            if hit:
                return True
        return False
