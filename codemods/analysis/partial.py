"""Reading a large file in parts: parse only the top-level blocks a rule's answer depends on.

A rule that can often show from a few blocks that a file has nothing for it declares how
(``Parts``, as ``Rule.PARTS``); ``read`` then cuts the text into top-level blocks without
parsing it (``analysis.blocks``), keeps what the rule names as relevant, and parses that:

- always kept, so that names resolve as in the whole file: every import (a `def` or `class`
  that holds one gives its imports alone, dedented, at their lines), every statement the stubs
  cannot reproduce (an "other" block, a statement sharing its line with another), and the
  module-level `name = callee(...)` calls the rule says bind something it reads
  (``Parts.keeps_call``);
- kept for the rule: its *targets* (blocks that may hold a finding's text) that lie on a chain
  from one of its *roots* (``Parts.relevant``), where a block reaches the blocks that define a
  function its text names (a method, from its own class or one its bases relate it to in the file), and the blocks on such chains
  back to the targets; a root that is a plain module-level function, when a kept block names it
  (a decorator factory);
- every other block is replaced by a stub that binds what it binds at its lines
  (``blocks.partial_source``): the kept statements parse to the nodes, lines and columns of the
  whole file's, and the module binds the same names.

The answer is a ``Reading`` or None: None whenever the text cannot be cut with certainty or what
is kept does not parse; then the rule reads the file whole. A rule uses a reading only to prove
that the file has no finding (``Rule.clean_from_parts``): its findings always come from the whole
file, so a reading can cost time, never a finding.
"""

from __future__ import annotations

import ast
import bisect
import re
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from jax_codemod.analysis.blocks import (
    CONTAINER_CALLS,
    Block,
    block_source,
    brackets_balance,
    class_body_indent,
    class_members,
    in_code,
    partial_source,
    string_interiors,
    top_level_blocks,
)
from jax_codemod.analysis import pieces
from jax_codemod.analysis.context import FileContext

Bindings = dict[str, object]
# Where a method may be named: the (begin, finish) spans of its class and of the classes related to it.
Scope = tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Parts:
    """How a rule reads a file in parts (``Rule.PARTS``).

    ``relevant(cut, base, bindings)``: (targets, roots), block indexes of ``cut.blocks``: the
    blocks that may hold what the rule finds, and those a chain to one must start from; None
    when the rule cannot tell (the file is read whole). ``base`` is the context of the blocks
    always kept, ``bindings`` its module-level names (``FileContext.qualname`` reads them).
    ``keeps_call(qualified)``: whether a module-level `name = callee(...)` whose callee resolves
    to ``qualified`` binds something the rule reads (an alias of a transform): such a block is
    always kept. ``cuts_class(text, begin, finish)``: whether a module-level class is worth
    cutting into its members (a method is then kept or stubbed as a function is); None: never.
    ``unliftable``: words an import inside a `def` or `class` must not hold to be lifted, as its
    stub, to module level (the rule reads those names' module-level imports only). ``most``:
    a reading that would keep more than this share of the text is none (parsing it would cost
    what the whole parse does); None: no limit.
    """

    relevant: Callable[[Cut, FileContext, Bindings], tuple[set[int], set[int]] | None]
    keeps_call: Callable[[str], bool] = lambda qualified: False
    cuts_class: Callable[[str, int, int], bool] | None = None
    unliftable: tuple[str, ...] = ()
    most: float | None = None


@dataclass(frozen=True)
class Reading:
    """A partial reading of ``cut.text``.

    ``context``: a context of the file with only the blocks that matter (``base`` itself when no
    target is on a chain from a root); ``may_matter``: whether a kept block is a target on such a
    chain (when not, the file has nothing for the rule); ``cut``: the text's blocks; ``base``: the
    context of the blocks always kept."""

    context: FileContext
    may_matter: bool
    cut: Cut
    base: FileContext


def read(ctx: FileContext, parts: Parts) -> Reading | None:
    """``ctx``'s file read in the parts ``parts`` names; None when it must be read whole."""
    text = ctx.text
    cut = Cut.of(text, parts.cuts_class)
    if cut is None or (not text.isascii() and any(cut.in_code(at) for at in non_ascii_runs(text))):
        return None  # identifiers are NFKC-normalized (`x.ｉtem()` is `x.item()`): read it whole
    fixed, replacements = _always_kept(cut, parts.unliftable)
    verbatim = list(fixed)  # the blocks the base holds as they are
    base = _parse_kept(ctx, cut.blocks, fixed, replacements)
    if base is None:
        return None
    base = _with_calls(ctx, cut, base, fixed, replacements, parts.keeps_call)
    if base is None or _cut_inside_brackets(cut, verbatim):
        return None
    bindings = base._bindings
    if any(name in bindings for name in CONTAINER_CALLS):
        return None  # `dict = ...`: the stubs' reading of `x = dict(...)` may not hold
    relevant = parts.relevant(cut, base, bindings)
    if relevant is None:
        return None
    targets, roots = relevant
    if not roots:
        # Nothing spells a transform: no chain reaches a target (``reached`` would walk back
        # from every target, and ``_named_classes`` search every class name, to say so).
        return Reading(base, False, cut, base)
    named = _named_classes(cut, roots, targets) if targets else None
    chain_fixed = fixed
    if named is not None:
        classes, also = named
        roots = roots | classes | also
        chain_fixed = [kept or i in also for i, kept in enumerate(fixed)]
    if not targets or not reached(cut, roots, targets):
        # No target on a chain from a root (the same reading that drops the other blocks):
        # what the rule finds is in none of the blocks, whatever the base holds.
        return Reading(base, False, cut, base)
    keep = _chains(cut, roots, targets, chain_fixed, parts.most)
    if keep is None:
        return None
    if keep == fixed:
        return Reading(base, True, cut, base)
    if _too_much(cut, keep, parts.most):
        return None
    added = [k and not f for k, f in zip(keep, fixed)]
    partial = _extended(ctx, base, cut.blocks, added, keep, replacements, cut.class_runs)
    return None if partial is None else Reading(partial, True, cut, base)


def proven_clean(ctx: FileContext, parts: Parts, clean: Callable[[Reading], bool]) -> bool:
    """Whether a partial reading of ``ctx``'s file shows the rule has nothing there: there is a
    reading, and no target on a chain from a root or ``clean(reading)``. False on any doubt,
    and when the reading fails in a way it should not: that costs a whole parse, never a
    finding. Never parses the whole file (``ctx.tree`` stays unread). The reading's contexts
    are released once it is judged: ``clean`` keeps nothing of them."""
    reading = None
    try:
        reading = read(ctx, parts)
        if reading is None:
            return False
        return not reading.may_matter or clean(reading)
    except Exception:  # noqa: BLE001 -- see the docstring; the tests call read() directly
        return False
    finally:
        if reading is not None:
            # What a rule caches on a context refers back to it (``Tracing.ctx``): a cycle
            # that holds the partial tree until the cyclic collector walks it, which the
            # engine runs once per file. Released here, reference counting frees it now.
            reading.context.release()
            reading.base.release()


# The blocks always kept ---------------------------------------------------------------------


def _always_kept(cut: Cut, unliftable: tuple[str, ...]) -> tuple[list[bool], dict[int, str]]:
    """(which blocks are kept whatever the rule says, the text to put in place of the others
    that hold imports): "other" blocks, statements with a second one on their line (`T = [];
    J = jax.jit`, which the stub would drop), and those with imports, which bind names
    anywhere (name resolution is flow-insensitive): a `def` or `class` gives its imports alone
    (``imports_only``), any other is kept. The word in a comment or string imports nothing
    (`# pylint: disable=g-import-not-at-top`)."""
    text, blocks = cut.text, cut.blocks
    fixed = [block.kind == "other" or (block.kind in ("assign", "call", "item") and cut.has_semicolon(block)) for block in blocks]
    importing: dict[int, list[int]] = {}
    for position in word_positions(text, "import"):
        index = cut.block_of(position)
        # (A block kept already, the module-level imports' among them, changes nothing.)
        if index is not None and not fixed[index] and cut.in_code(position):
            importing.setdefault(index, []).append(position)
    replacements: dict[int, str] = {}
    for index, positions in importing.items():
        block = blocks[index]
        replacement = imports_only(text, block, positions, unliftable) if block.kind in ("def", "class") else None
        if replacement is None:
            fixed[index] = True
        else:
            replacements[index] = replacement
    return fixed, replacements


def _with_calls(ctx, cut: Cut, base: FileContext, fixed: list[bool], replacements, keeps_call) -> FileContext | None:
    """``base`` with the module-level `name = callee(...)` blocks ``keeps_call`` asks for (`J =
    partial(jax.jit, ...)`, `ffi = cffi.FFI()`) added to ``fixed`` and parsed; ``base`` when
    there are none. A stub binds `name` to nothing, as such a call does for the rest."""
    bindings = base._bindings
    calls = [
        i
        for i, block in enumerate(cut.blocks)
        if block.kind == "call" and not fixed[i] and _names_kept_call(block.callee, bindings, keeps_call)
    ]
    if not calls:
        return base
    added = [i in calls for i in range(len(cut.blocks))]
    for index in calls:
        fixed[index] = True
    return _extended(ctx, base, cut.blocks, added, fixed, replacements, cut.class_runs)


def _names_kept_call(callee: str, bindings: Bindings, keeps_call) -> bool:
    head, *rest = callee.split(".")
    target = bindings.get(head)
    if not isinstance(target, str):
        return False  # resolves to nothing: no qualified name to ask about
    return keeps_call(".".join([target, *rest]))


def _cut_inside_brackets(cut: Cut, verbatim: list[bool]) -> bool:
    """Whether a block may be a piece of a statement cut at a line at column 0 inside brackets
    (`g(\\nx.item())`, `f(\\njit=1)`, `a\\n@ b`): such a block reads as one of its own.

    A kept block cut so does not parse, but nothing parses two stubbed halves, and what the
    second holds (or the name its stub binds) would be read wrongly. The last such half closes
    what the statement's first block opens, and is no plain `def` or `class` (those do not start
    inside brackets): such a block that can be stubbed (an assignment, an item, a decorated
    statement) balances its brackets, and so does one the base holds as it is, after another
    it holds so: the two parse, but the chains would read them as two blocks (`if c: f =
    jax.jit(lambda x: g(x,` in one, its `x.item()))` in the other, reached from nothing). After
    a stub, such a half does not parse. (A class's members were checked when it was cut.)"""
    text, interiors, starts = cut.text, cut.interiors, cut.string_starts
    for index, block in enumerate(cut.blocks):
        if block.indent and block.kind != "head":
            continue
        if block.decorated and not brackets_balance(text, block.begin, block.header, interiors, starts):
            return True
        if block.kind in ("def", "class", "head"):
            continue
        if (
            (not verbatim[index] and block.kind in ("assign", "call", "item"))
            or (verbatim[index] and index and verbatim[index - 1])
        ) and not brackets_balance(text, block.begin, block.finish, interiors, starts):
            return True
    return False


def _named_classes(cut: Cut, roots: set[int], targets: set[int]) -> tuple[set[int], set[int]] | None:
    """When a root calls a class of the file that holds a target, or names a module-level
    instance of one (`model = Model()`): (the blocks of those classes, and of the classes related
    to them by their bases; the blocks to keep: their headers, the module-level instances of
    them and the roots that name one or call such a class). A trace runs `Model()(x)`,
    `model.apply(x)` or `model(x)`, but the chains go by the names of functions, not of classes
    or instances: the classes' blocks are roots of their own. None when no root names such a
    class."""
    blocks = cut.blocks
    holders = set()
    for index in targets:
        head = index
        if blocks[head].indent:
            while head > 0 and blocks[head].kind != "head":
                head -= 1
        if blocks[head].kind in ("class", "head") and blocks[head].name:
            holders.add(blocks[head].name)
    if not holders:
        return None
    # A class related to one by their bases (`class Child(Base)`) runs its methods too.
    for heads in cut.group_heads:
        names = {blocks[first].name for first in heads}
        if names & holders:
            holders |= names
    instances = {i for i, b in enumerate(blocks) if b.kind == "call" and not b.indent and b.name and b.callee in holders}
    names = {blocks[i].name for i in instances}
    # (No instance named, no root's words to read: most files.)
    naming = {root for root in roots if cut.words(root) & names} if names else set()
    naming |= _calling_a_class(cut, roots, holders)
    if not naming:
        return None
    classes, headers = set(), set()
    for index, block in enumerate(blocks):
        # (A cut class's header has its body's indentation; a class kept whole, none.)
        if (block.kind == "head" or (block.kind == "class" and not block.indent)) and block.name in holders:
            run = _run(cut, index) if block.kind == "head" else (index,)
            classes.update(run)
            headers.update(i for i in run if blocks[i].kind in ("class", "head"))  # nested classes too
    return classes, instances | naming | headers


def _calling_a_class(cut: Cut, roots: set[int], holders: set[str]) -> set[int]:
    """The roots that call one of the classes ``holders`` names (`Model(s)(x)`, `m =
    Model(s)`), not only name it (`super(Model, self)`): a class's name stands in few places of
    its file, found with `str.find`."""
    text, found = cut.text, set()
    for name in holders:
        at = text.find(name)
        while at != -1:
            end = next_char = at + len(name)
            while text[next_char : next_char + 1] in (" ", "\t"):
                next_char += 1
            before = text[at - 1] if at else ""
            if (
                text[next_char : next_char + 1] == "("
                and not (before.isalnum() or before == "_")
                and not text[max(0, at - 16) : at].rstrip(" \t").endswith("class")  # its own header
                and cut.block_of(at) in roots
            ):
                found.add(cut.block_of(at))
            at = text.find(name, end)
    return found


# The chains from the roots to the targets ---------------------------------------------------


def _chains(cut: Cut, roots: set[int], targets: set[int], fixed: list[bool], most: float | None) -> list[bool] | None:
    """Which blocks to keep: ``fixed``, the targets a chain from ``roots`` reaches, the blocks
    on chains back from those, and the decorator factories a kept block names. None when the
    first of those already keeps more than ``most`` of the text."""
    blocks = cut.blocks
    defined = cut.defined()
    # Forward from the roots, through the functions they name (a method from its own class, or
    # one related to it, only); each name a reached block's words hold, with the blocks that
    # hold it (``mentions``): the blocks that name a function, among those reached.
    member_of = cut.member_of
    reach = set(roots)
    pending = list(roots)
    mentions: dict[str, list[int]] = {}
    names = set(defined)
    while pending:
        source = pending.pop()
        for word in cut.words_among(source, names):
            mentions.setdefault(word, []).append(source)
            for target, within in defined[word]:
                if target not in reach and (within is None or within == member_of[source]):
                    reach.add(target)
                    pending.append(target)
    # ...and back from the targets, through the blocks that name their functions.
    keep = [fixed[i] or (i in targets and i in reach) for i in range(len(blocks))]
    # Blocks are only added from here: a file that needs a partial tree (keep differs from
    # fixed) past ``most`` already is read whole at once.
    if keep != fixed and _too_much(cut, keep, most):
        return None
    names_done: set[tuple] = set()
    pending = [i for i in range(len(blocks)) if keep[i] and i in reach]
    while pending:
        for name, within in cut.defines(pending.pop()):
            if (name, within) in names_done:
                continue
            names_done.add((name, within))
            # The reached blocks that name it in code (``Cut.naming``, within its scope): of
            # those whose words hold it, those with an occurrence out of the triple-quoted strings.
            for other in mentions.get(name, ()):
                if not keep[other] and (within is None or within == member_of[other]) and cut.names_in_code(other, name):
                    keep[other] = True
                    pending.append(other)
    # A class of a group whose methods are kept keeps its header (its bases: which override runs).
    for heads in cut.group_heads:
        if any(keep[i] for first in heads for i in _run(cut, first)):
            for first in heads:
                keep[first] = True
    # Decorator factories the kept blocks name (`@compile` with `def compile(fn): return jax.jit(fn)`)
    # anywhere in their text: a reached one's words are in ``mentions``, the others' read here.
    factories = [
        i for i in roots if not keep[i] and blocks[i].kind == "def" and not blocks[i].decorated and not blocks[i].indent
    ]
    if factories:
        kept = list(keep)
        elsewhere: set[str] = set()
        factory_names = {blocks[i].name for i in factories}
        for index in range(len(blocks)):
            if kept[index] and index not in reach:
                elsewhere |= cut.words_among(index, factory_names)
        for index in factories:
            name = blocks[index].name
            if name in elsewhere or any(kept[i] for i in mentions.get(name, ())):
                keep[index] = True
    return keep


def _run(cut: Cut, first: int) -> range:
    last = first
    while last + 1 < len(cut.blocks) and cut.member_of[last + 1] == cut.member_of[first] and cut.blocks[last + 1].kind != "head":
        last += 1
    return range(first, last + 1)


def _too_much(cut: Cut, keep: list[bool], most: float | None) -> bool:
    return most is not None and sum(b.finish - b.begin for b, k in zip(cut.blocks, keep) if k) > most * len(cut.text)


_CLASS_HEADER = re.compile(r"class[ \t]+(\w+)[ \t]*(?:\[[^\]]*\])?[ \t]*\(")
_PARENTHESIS = re.compile(r"[()]")


def class_groups(blocks: list[Block], text: str, runs: list[tuple[int, int]] | None = None) -> list[list[tuple[int, int]]]:
    """The module-level classes of the file that name one another among their bases, directly
    or through others (`class B(A)`, `class C(B)`: one group), as the (first, last) block runs
    of each group's classes; groups of one class are left out. A call through `self` or
    `super()` in one class of a group may run a method of another (``analysis.classes``)."""
    # (a "head" has its body's indentation)
    classes = [index for index, block in enumerate(blocks) if block.kind == "head" or (block.kind == "class" and not block.indent)]
    if len(classes) < 2:
        return []  # most files: no two classes to relate
    spans: dict[str, list[tuple[int, int]]] = {}
    bases: dict[str, set[str]] = {}
    ends = dict(class_runs(blocks) if runs is None else runs)
    for index in classes:
        block = blocks[index]
        spans.setdefault(block.name, []).append((index, ends.get(index, index)))
        match = _CLASS_HEADER.match(text, block.header)
        if match is None or match.group(1) != block.name:
            continue
        depth, at = 1, match.end()
        while depth:  # to the parenthesis that closes the bases (from one to the next)
            bracket = _PARENTHESIS.search(text, at, block.finish)
            if bracket is None:
                at = block.finish
                break
            at = bracket.end()
            depth += 1 if bracket.group() == "(" else -1
        bases.setdefault(block.name, set()).update(set(WORDS.findall(text, match.end(), at)) - {block.name})
    parent = {name: name for name in spans}

    def find(name: str) -> str:
        while parent[name] != name:
            parent[name] = parent[parent[name]]
            name = parent[name]
        return name

    for name, words in bases.items():
        for word in words & spans.keys():
            parent[find(word)] = find(name)
    groups: dict[str, list[str]] = {}
    for name in spans:
        groups.setdefault(find(name), []).append(name)
    return [[run for name in names for run in spans[name]] for names in groups.values() if len(names) > 1]


def reached(cut: Cut, roots: set[int], targets: set[int]) -> bool:
    """Whether a block of ``targets`` is on a chain from a block of ``roots``: the forward
    reading of ``read`` (a block reaches the blocks that define a function named anywhere in
    its text; a method, the blocks of its class only), walked backwards from the targets. Most
    files have many roots and few targets, so walking back from those reads little of the
    text; a chain found either way is the same chain."""
    if not roots.isdisjoint(targets):
        return True
    # A class none of whose blocks is a root or defines a function a call outside it may name
    # (one under an `if`, a nested class's) is entered by no chain: its methods are named from
    # its own blocks only. Its blocks are not walked (a JAX-heavy class holds access text in
    # many methods that call each other, none of them traced).
    blocks, member_of = cut.blocks, cut.member_of
    entered = {member_of[i] for i in roots} | {
        member_of[i]
        for i, block in enumerate(blocks)
        if block.kind in ("other", "class") and member_of[i] is not None and cut.functions(i)
    }
    seen = set(targets)
    pending = [i for i in targets if member_of[i] is None or member_of[i] in entered]
    names_done: set[tuple] = set()
    while pending:
        index = pending.pop()
        if member_of[index] is not None and member_of[index] not in entered:
            continue
        for name, within in cut.defines(index):
            if (name, within) in names_done:
                continue
            names_done.add((name, within))
            for other in cut.naming(name, strings=True, within=within):
                if other in roots:
                    return True
                if other not in seen:
                    seen.add(other)
                    pending.append(other)
    return False


# Parsing what is kept ------------------------------------------------------------------------


def _parse_kept(ctx: FileContext, blocks: list[Block], keep: list[bool], replacements=None) -> FileContext | None:
    source = partial_source(ctx.text, blocks, keep, replacements)
    tree = parse_quietly(source, ctx.path)
    if tree is None:
        return None
    base = FileContext(ctx.path, source, tree)
    ctx.borrow_project(base)
    base.partial = True
    return base


def parse_quietly(source: str, path: str) -> ast.Module | None:
    """The tree of a partial text, or None where it does not parse (the caller reads the file
    whole then, and the whole-file parse reports what is wrong); no warnings (the whole-file
    parse gives those once)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return pieces.parse(source, path)  # (in pieces when large: the peak memory)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _extended(
    ctx: FileContext, base: FileContext, blocks: list[Block], added: list[bool], keep: list[bool], replacements,
    runs: list[tuple[int, int]],
):
    """The context of the blocks ``keep`` names, made from ``base`` (that of the blocks kept
    but not ``added``): only the added blocks are parsed, and their statements put in place of
    their stubs (each block parses on its own exactly when the text of the kept blocks does,
    their brackets balancing in both); None when they do not parse. A method is parsed with its
    class: a class with an added block is parsed whole, as the partial text has it, and put in
    place of the base's."""
    text = ctx.text
    added = list(added)
    for first, last in runs:  # (the cut's ``class_runs``)
        if any(added[first : last + 1]):
            added[first : last + 1] = [True] * (last + 1 - first)
    replacements = replacements or {}
    source = "".join(
        block_source(text, b, k, replacements.get(i)) if a else "\n" * b.line_breaks(text)
        for i, (b, a, k) in enumerate(zip(blocks, added, keep))
    )
    source = "\n" * text.count("\n", 0, blocks[0].begin) + source
    more = parse_quietly(source, ctx.path)
    if more is None:
        return None
    # The base's statements on an added block's lines are its stub and extracted imports.
    spans = [(b.start, b.end) for b, a in zip(blocks, added) if a]
    firsts = [start for start, _ in spans]

    def stubbed(statement: ast.stmt) -> bool:
        index = bisect.bisect_right(firsts, statement.lineno) - 1
        return index >= 0 and statement.lineno <= spans[index][1]

    body = [s for s in base.tree.body if not stubbed(s)] + more.body
    body.sort(key=lambda s: (s.lineno, s.col_offset))
    tree = ast.Module(body=body, type_ignores=[])
    partial = FileContext(ctx.path, partial_source(text, blocks, keep, replacements), tree)
    ctx.borrow_project(partial)
    partial.partial = True
    # The module's names are the base's: it holds every import of the file (those of the
    # stubbed `def`s and classes at their lines, which name resolution reads wherever they
    # stand), and a stub binds a `def` or `class` name to nothing as the definition does.
    # An added module-level `name = ...` block binds its name by its value, its stub to
    # nothing; the two agree for the values such blocks hold (a display, a call: an alias
    # like `J = jax.jit` is an "other" block, in the base), but that is not relied on.
    bindings = base.__dict__.get("_bindings")
    if bindings is not None and not any(a and not b.indent and b.kind in ("assign", "call") for b, a in zip(blocks, added)):
        partial.__dict__["_bindings"] = bindings
    return partial


def imports_only(text: str, block: Block, positions: list[int], unliftable: tuple[str, ...] = ()) -> str | None:
    """A `def` or `class` block's stub with its import statements (the word `import` at
    ``positions``), dedented, on their own lines (the rest blank); None unless each is a plain
    `import`/`from` statement of its own, after the block's first line and holding none of
    ``unliftable``. A comment may end its first line (no import statement holds a quote, so a
    `#` in a line without one starts a comment)."""
    chunk = text[block.begin : block.finish]
    lines = chunk.split("\n")
    out = [""] * len(lines)
    indent = block.indent
    out[0] = f"{indent}{block.name} = None" if indent else f"class {block.name}: pass"
    for position in positions:
        number = text.count("\n", block.begin, position)
        line = lines[number]
        statement = line.lstrip()
        if number == 0 or not statement.startswith(("import ", "from ")) or any(w in statement for w in unliftable):
            return None
        code, comment, _ = statement.partition("#")
        if comment and ("'" in statement or '"' in statement):
            return None
        last = number
        if "(" in code and ")" not in code:
            last = min(number + 1, len(lines) - 1)
            while last + 1 < len(lines) and ")" not in lines[last]:
                last += 1
        elif code.rstrip().endswith("\\") or ";" in code:
            return None
        out[number] = indent + statement
        for follow in range(number + 1, last + 1):
            if any(w in lines[follow] for w in unliftable) or "#" in lines[follow] or ";" in lines[follow]:
                return None
            out[follow] = lines[follow]
    return "\n".join(out)


# The text cut into blocks --------------------------------------------------------------------

# A run of them holds no quote, `#` or line end: all its characters are code or none is.
NON_ASCII = re.compile(r"[^\x00-\x7f]+")
# A `def` line after the first line of a block (the first is a `def` block's own): a literal
# line break first, which the regex engine searches fast (`^` or a look-behind it tries at
# every character).
_DEF_NAME = re.compile(r"\n[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)")
# `to_host = lambda x: ...`, `double_host = functools.partial(scaled_host, scale=2.0)`: called
# by the name, as a `def` is (a partial of anything: keeping a block costs time, never a finding).
_HELPER_NAME = re.compile(r"([A-Za-z_]\w*)[ \t]*=[ \t]*(?:lambda\b|(?:[A-Za-z_]\w*[ \t]*\.[ \t]*)*partial[ \t]*\()")
_INDENTED_DEF = re.compile(r"\n([ \t]*)(?:async[ \t]+)?def[ \t]+(\w+)")
WORDS = re.compile(r"\w+")
_NOT_WORD_TO_SPACE = str.maketrans({c: " " for c in map(chr, range(128)) if not (c.isalnum() or c == "_")})


class Cut:
    """``text`` cut into top-level ``blocks`` (module-level classes ``cuts_class`` accepts cut
    into their members, ``with_members``): which block a position is in, which blocks name a
    word or match a pattern, which functions a block defines. ``interiors``: the inside of
    every triple-quoted string (``blocks.string_interiors``), ``string_starts`` their first
    offsets."""

    @classmethod
    def of(cls, text: str, cuts_class: Callable[[str, int, int], bool] | None = None) -> Cut | None:
        """The cut of ``text``, or None when it cannot be cut with certainty (line ends the
        regexes miss, a form feed, a string it cannot follow, no block)."""
        if "\r" in text or "\f" in text or "\v" in text:
            return None
        interiors = string_interiors(text)
        blocks = top_level_blocks(text, interiors) if interiors is not None else None
        if not blocks:
            return None
        return cls(text, with_members(text, blocks, interiors, cuts_class), interiors)

    def __init__(self, text: str, blocks: list[Block], interiors: list[tuple[int, int]]) -> None:
        self.text, self.blocks, self.interiors = text, blocks, interiors
        self.begins = [block.begin for block in blocks]
        self.string_starts = [first for first, _ in interiors]
        # The text outside the triple-quoted strings, their quotes excluded: (start, end).
        pieces, position = [], 0
        for first, last in interiors:
            pieces.append((position, first - 3))
            position = last + 3
        pieces.append((position, len(text)))
        self.code_pieces = pieces
        # A class cut into its members: each member's class, as (begin, finish) of its text;
        # a method's `scope` is its class (it is called as `self.name`, from its class only).
        # A group of classes related by their bases (``class_groups``) is one scope: a method
        # of one may be called through `self` in another. A scope is its classes' spans.
        self.member_of: list[Scope | None] = [None] * len(blocks)
        self.scope: list[Scope | None] = [None] * len(blocks)
        # A class of a group kept as one block defines its methods for the group's scope.
        self.group_heads: list[list[int]] = []
        # (first, last) of each class cut into its members, found once for every reading.
        self.class_runs = list(class_runs(blocks))
        runs = {first: (first, last) for first, last in self.class_runs}
        grouped: dict[int, Scope] = {}
        for group in class_groups(blocks, text, self.class_runs):
            key = tuple(sorted((blocks[first].begin, blocks[last].finish) for first, last in group))
            grouped.update((first, key) for first, _ in group)
            self.group_heads.append([first for first, _ in group])
            for first, _ in group:
                if first not in runs:  # a class kept whole
                    self.member_of[first] = self.scope[first] = key
        for first, last in runs.values():
            key = grouped.get(first, ((blocks[first].begin, blocks[last].finish),))
            for member in range(first, last + 1):
                self.member_of[member] = key
                if blocks[member].kind == "def":
                    self.scope[member] = key

        self._functions: dict[int, set[str]] = {}
        self._spaced: str | None = None

    def in_code(self, position: int) -> bool:
        """Whether ``position`` is in code, not in a string or comment (``blocks.in_code``)."""
        return in_code(self.text, position, self.interiors, self.string_starts)

    def has_semicolon(self, block: Block) -> bool:
        """Whether a `;` in code ends a statement in ``block``: a second one on its line."""
        text = self.text
        found = text.find(";", block.begin, block.finish)
        while found != -1:
            if self.in_code(found):
                return True
            found = text.find(";", found + 1, block.finish)
        return False

    def words(self, index: int) -> set[str]:
        """``set(WORDS.findall(text, begin, finish))`` of a block: the words of its text
        (comments and strings included)."""
        return set(self._tokens(index))

    def words_among(self, index: int, names: set[str]) -> set[str]:
        """``words(index) & names``, without making the set of every word of the block."""
        return names.intersection(self._tokens(index))

    def _tokens(self, index: int) -> list[str]:
        """``WORDS.findall(text, begin, finish)`` of a block. An ASCII text is split at its
        other characters, translated to spaces once for all blocks (a third of the regex's
        cost; `\\w` of an ASCII character is a letter, a digit or `_`, so the words are the
        same)."""
        block, text = self.blocks[index], self.text
        if not text.isascii():
            # (Translating a text with other characters reads each through the table's dict:
            # ten times the ASCII path. Most blocks of such a text are ASCII, each translated alone.)
            piece = text[block.begin : block.finish]
            return piece.translate(_NOT_WORD_TO_SPACE).split() if piece.isascii() else WORDS.findall(piece)
        if self._spaced is None:
            self._spaced = text.translate(_NOT_WORD_TO_SPACE)
        return self._spaced[block.begin : block.finish].split()

    def word_counts(self) -> Counter[str]:
        """How often each word (``WORDS``) occurs in the text, comments and strings included."""
        text = self.text
        if not text.isascii():
            return Counter(WORDS.findall(text))
        if self._spaced is None:
            self._spaced = text.translate(_NOT_WORD_TO_SPACE)
        return Counter(self._spaced.split())

    def functions(self, index: int) -> set[str]:
        """The functions a block defines that a call elsewhere may resolve to: a `def`
        block's; in an "other" block, every `def` line's; in a class not cut into its members
        (or a nested one), those of the `def` lines that are not its methods (a method directly
        in a class body is resolved through `self` only, in its class's block, but one under
        an `if` in it resolves by its name)."""
        found = self._functions.get(index)
        if found is None:
            block, text = self.blocks[index], self.text
            if block.kind == "def":
                found = {block.name}
            elif block.kind == "other":
                # (An "other" block begins with no `def`: that is a "def" block.)
                found = set(_DEF_NAME.findall(text, block.begin, block.finish))
                # `to_host = lambda x: np.asarray(x)`, a partial alias: called by its name.
                bound = _HELPER_NAME.match(text, block.begin, block.finish)
                if bound is not None:
                    found.add(bound.group(1))
            elif block.kind == "call":
                # `double_host = functools.partial(scaled_host, scale=2.0)`: called by its name.
                bound = _HELPER_NAME.match(text, block.begin, block.finish)
                found = {bound.group(1)} if bound is not None else set()
            elif block.kind == "class":
                methods = class_body_indent(text, block, self.interiors, self.string_starts)
                found = {
                    name
                    for indent, name in _INDENTED_DEF.findall(text, block.begin, block.finish)
                    if indent != methods
                }
            else:
                found = set()
            self._functions[index] = found
        return found

    def defines(self, index: int) -> list[tuple[str, Scope | None]]:
        """(name, where a call may name it: None for anywhere) of each function a block defines
        that a call may resolve to (``functions``)."""
        within = self.scope[index]
        if within is not None and self.blocks[index].kind == "class":
            return [(name, within) for name in self.methods(index)] + [(name, None) for name in self.functions(index)]
        return [(name, within) for name in self.functions(index)]

    def defined(self) -> dict[str, list[tuple[int, Scope | None]]]:
        """Each name a block defines a function by (``defines``), with (that block, the
        scope a call may name it in) of each."""
        defined: dict[str, list[tuple[int, Scope | None]]] = {}
        scope = self.scope
        for index, block in enumerate(self.blocks):
            if block.kind == "def":  # (``defines`` of a `def` block, without the calls)
                defined.setdefault(block.name, []).append((index, scope[index]))
            elif block.kind != "assign" and block.kind != "item" and block.kind != "head":
                for name, within in self.defines(index):
                    defined.setdefault(name, []).append((index, within))
        return defined

    def names_in_code(self, index: int, word: str) -> bool:
        """Whether block ``index`` names ``word`` out of the triple-quoted strings (``naming``
        of the block alone)."""
        block = self.blocks[index]
        found: set[int] = set()
        self._naming_between(word, False, block.begin, block.finish, found)
        return bool(found)

    def methods(self, index: int) -> set[str]:
        """The methods a class kept as one block defines directly in its body."""
        block, text = self.blocks[index], self.text
        indent = class_body_indent(text, block, self.interiors, self.string_starts)
        return {name for at, name in _INDENTED_DEF.findall(text, block.begin, block.finish) if at == indent}

    def block_of(self, position: int) -> int | None:
        """The block of ``position``; None for the comments and blank lines before the first
        one, and for text inside a triple-quoted string (docstrings, embedded programs: no code)."""
        if position < self.begins[0]:
            return None
        inside = bisect.bisect_right(self.string_starts, position) - 1
        if inside >= 0 and position <= self.interiors[inside][1]:
            return None
        return bisect.bisect_right(self.begins, position) - 1

    def blocks_at(self, positions) -> set[int]:
        return {i for i in map(self.block_of, positions) if i is not None}

    def matching(self, pattern: re.Pattern[str], accept=None, offset: int = 0, found: set[int] | None = None) -> set[int]:
        """``found`` (a new set when None) with the blocks of the matches of ``pattern`` that
        ``accept(match)`` accepts (all when None), each match's position ``offset`` past its
        start: ``blocks_at(...)`` of those positions from ``finditer``, for a pattern that
        matches no quote but in a comment (such as an attribute after a dot).
        ``matching_families`` with one family: a pattern without named groups."""
        found = set() if found is None else found
        self.matching_families(pattern, {None: (offset, accept, found)})
        return found

    def matching_families(self, pattern: re.Pattern[str], families: dict) -> None:
        """``matching(<a family's own pattern>, accept, offset, found)`` for every family of
        ``pattern`` in one scan: ``families`` maps the name of the named group that tells a
        family's matches (``match.lastgroup``) to (offset, accept or None, found). At most one
        family may match at a position.

        A block found already is not read again: the family's search goes on at its end (a
        match that ends past a block's end reads no dot of the next block, so the matches
        after it are those finditer gives), and after a match not taken at that match's end,
        as the family's own scan would (families may share one ``found``). Nor is a
        triple-quoted string, a quarter of a JAX-heavy file: the code between them is searched
        piece by piece (no match reaches a quote, so none crosses into or out of one, and the
        end of a piece, a quote, reads as its end does)."""
        text, search, blocks, block_of = self.text, pattern.search, self.blocks, self.block_of
        resume = dict.fromkeys(families, 0)
        for start, end in self.code_pieces:
            position = max(start, min(resume.values()))
            while position < end:
                match = search(text, position, end)
                if match is None:
                    break
                at, family = match.start(), match.lastgroup
                if at >= resume[family]:
                    offset, accept, found = families[family]
                    index = block_of(at + offset)
                    if index is not None and index in found:
                        resume[family] = blocks[index].finish
                    elif index is not None and (accept is None or accept(match)):
                        found.add(index)
                        resume[family] = blocks[index].finish
                    else:
                        resume[family] = match.end()
                position = max(at + 1, min(resume.values()))

    def naming(self, word: str, strings: bool = False, within: Scope | None = None) -> set[int]:
        """``blocks_at(word_positions(text, word))``, reading one occurrence per block:
        common words (`bytes`, `jit`, a helper's name) occur hundreds of times in a JAX-heavy
        file, in few blocks. ``strings``: count the word inside triple-quoted strings too
        (the blocks whose ``WORDS`` hold it); ``within``: the blocks between those offsets
        only (a class's, for a method's name)."""
        found: set[int] = set()
        for low, high in within if within is not None else ((self.begins[0], len(self.text)),):
            self._naming_between(word, strings, low, high, found)
        return found

    def _naming_between(self, word: str, strings: bool, low: int, high: int, found: set[int]) -> None:
        text, begins, starts, interiors = self.text, self.begins, self.string_starts, self.interiors
        size = len(text)
        find, length = text.find, len(word)
        start = find(word, max(low, begins[0]), high)
        while start != -1:
            end = start + length
            before = text[start - 1] if start else " "
            after = text[end] if end < size else " "
            if before.isalnum() or before == "_" or after.isalnum() or after == "_":
                start = find(word, end, high)
                continue
            if not strings:
                inside = bisect.bisect_right(starts, start) - 1
                if inside >= 0 and start <= interiors[inside][1]:
                    start = find(word, interiors[inside][1], high)
                    continue
            index = bisect.bisect_right(begins, start) - 1
            found.add(index)
            start = find(word, self.blocks[index].finish, high)


def with_members(
    text: str, blocks: list[Block], interiors: list[tuple[int, int]], cuts_class: Callable[[str, int, int], bool] | None
) -> list[Block]:
    """``blocks`` with each module-level class that ``cuts_class`` accepts and
    ``blocks.class_members`` can cut replaced by its members: a method is kept or stubbed as a
    top-level function is (the chains reach it through the names blocks mention, `self.name`
    among them); what else the body holds is kept. A test module is one class holding every
    test: its methods are most of the file."""
    if cuts_class is None or not any(block.kind == "class" for block in blocks):
        return blocks
    starts = [first for first, _ in interiors]
    out = []
    for block in blocks:
        # A class the rule has no use cutting stays one block: cutting costs more than a stub.
        members = (
            class_members(text, block, interiors, starts)
            if block.kind == "class" and cuts_class(text, block.begin, block.finish)
            else None
        )
        if members is None:
            out.append(block)
        else:
            out.extend(members)
    return out


def class_runs(blocks: list[Block]) -> Iterator[tuple[int, int]]:
    """(first, last) index of each class ``with_members`` cut into its members: its "head"
    block and the indented members that follow it."""
    index, count = 0, len(blocks)
    while index < count:
        if blocks[index].kind != "head":
            index += 1
            continue
        last = index
        while last + 1 < count and blocks[last + 1].indent and blocks[last + 1].kind != "head":
            last += 1
        yield index, last
        index = last + 1


# Words in text ------------------------------------------------------------------------------


def non_ascii_runs(text: str) -> Iterator[int]:
    """Where each run of non-ASCII characters (``NON_ASCII``) starts. Only the pieces of about
    a kilobyte, cut at line breaks, that have one are searched: a regex over the whole text
    tries every character, ``str.isascii`` of a piece costs next to nothing, and a run never
    spans a line break (one loop per line cost more than the search)."""
    size, start, find, search = len(text), 0, text.find, NON_ASCII.finditer
    while start < size:
        end = find("\n", start + _PIECE)
        if end == -1:
            end = size
        if not text[start:end].isascii():
            for match in search(text, start, end):
                yield match.start()
        start = end


_PIECE = 1024


def word_positions(text: str, word: str) -> Iterator[int]:
    """Where ``word`` occurs as a whole word (no letter, digit or `_` on either side)."""
    size, length = len(text), len(word)
    start = text.find(word)
    while start != -1:
        end = start + length
        if (start == 0 or not is_word_char(text[start - 1])) and (end == size or not is_word_char(text[end])):
            yield start
        start = text.find(word, end)


def is_word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def dotted_before(text: str, dot: int) -> tuple[str | None, list[str]]:
    """(head, the names after it) of the dotted name right before ``dot``: `jax.lax` in
    `jax.lax.scan` -> ("jax", ["lax"]); head None when the text does not show a plain one
    (`f().jit`, `jax .lax.scan`, `x[0].item`)."""
    start = dot
    while start > 0 and (is_word_char(text[start - 1]) or text[start - 1] == "."):
        start -= 1
    before = start - 1
    while before >= 0 and text[before] in " \t\n\\":
        before -= 1
    parts = text[start:dot].split(".")
    if (before >= 0 and text[before] in ".)]}") or not all(parts) or parts[0][0].isdigit():
        return None, []
    return parts[0], parts[1:]
