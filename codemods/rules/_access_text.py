"""Where JAX001's findings can be: read from a file's text alone (the prefilter's byte scans,
the lines that may hold an access, which top-level blocks a partial reading must keep: JAX001's
declaration of ``analysis.partial``), and which calls and attributes of a tree are accesses.

Built from the rule's own tables (``AccessText(members, consumers, ...)``), so that the rule
module keeps its member table, its check and its messages, and the text scans follow the
table: a member added there is searched for here with no second list to keep in step.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property, wraps

from jax_codemod.analysis.api import TREE_MAPS, UNAVAILABLE
from jax_codemod.analysis.blocks import CONTAINER_CALLS, at_own_level, simple_statement
from jax_codemod.analysis.context import FileContext
from jax_codemod.analysis.names import canonical
from jax_codemod.analysis.partial import WORDS, Cut, dotted_before
from jax_codemod.analysis.patterns import POSSESSIVE, alternation, starts_of
from jax_codemod.analysis.project import LIBRARIES
from jax_codemod.analysis.transforms import PARTIAL, TRANSFORM_LEAVES, TRANSFORMS, Spellings, spellings_of
from jax_codemod.analysis.words import called_positions, find_word, lines_of, reversed_calls, words_once

# A file must name one of these to trace anything: jax's transforms and `lax`, equinox's
# filter_* and flax's lifted ones all contain one of them.
TRANSFORM_BYTES = re.compile(rb"jit|vmap|pmap|grad|jac|hessian|checkpoint|remat|shard_map|jvp|vjp|linearize|lax")
TRANSFORM_SPELLINGS = tuple(TRANSFORM_BYTES.pattern.split(b"|"))
# The transform spellings as the prefilter scans for them: the ones most files that trace
# anything contain first (one short scan each), the rest only for a file without them.
_COMMON = (b"lax", b"jit", b"checkpoint", b"grad", b"vmap")
TRANSFORMS_COMMON_FIRST = _COMMON + tuple(spelling for spelling in TRANSFORM_SPELLINGS if spelling not in _COMMON)

# Text that may spell an access in the tree, whatever the whitespace, line breaks and
# comments around the dot: `x.\n    item()`, `x. \\\n item()`. The gap (whitespace, line
# breaks, backslash continuations) gives nothing back: what follows it never begins with them.
_GAP = rf"(?:\s|\\)*{POSSESSIVE}"
# `x.  # why\n    item()`: a comment may sit between the dot and the name, inside brackets.
_COMMENTED_GAP = rf"{_GAP}(?:#[^\n]*{POSSESSIVE}\n{_GAP})*{POSSESSIVE}"
_TRANSFORM_WORDS = sorted(TRANSFORM_LEAVES - {"partial"})
# A decorator with none of these words applies no transform by its own spelling (`partial`
# alone traces nothing: `partial(jax.jit, ...)` has `jit`).
_SPELLED_WORDS = frozenset(_TRANSFORM_WORDS)


def last_answer(function):
    """``function`` answering the arguments of its last call again without work: the prefilter,
    the project gate and the check ask the same question of the same bytes in a row (the check
    of equal bytes, the text encoded again). The arguments are held, so an identity is never
    reused for other bytes."""
    last: list = []  # [arguments, answer]

    @wraps(function)
    def ask(*arguments):
        if last and last[0] == arguments:  # identity first, then equality, element by element
            return last[1]
        answer = function(*arguments)
        last[:] = [arguments, answer]
        return answer

    return ask


@last_answer
def names_transform(source: bytes) -> bool:
    """Whether ``source`` names anything that can trace (``TRANSFORM_BYTES`` finds a match), or
    decorates a function with a name it imports (``from .compile import compiled`` and
    ``@compiled``: a transform alias of another module of its project, issue 34)."""
    return any(spelling in source for spelling in TRANSFORMS_COMMON_FIRST) or _decorates_with_import(source)


def transform_calls(text: str, spellings: Spellings) -> list[int]:
    """Where ``text`` calls a name that may apply a transform (``spellings.call_names``): the
    table's names with one cached regex, the file's own (aliases, imports) one find each."""
    return called_positions(text, spellings.call_names, table=TRANSFORM_LEAVES)


# A decorator that is a bare name, called or not (`@compiled`, `@compiled(n=2)`), and a `from`
# import with what follows `import` on its line: each first at the start of a line but its
# indentation. The patterns open with a literal, which the regex engine searches for; one that
# opens with `^` is tried at every position of the file.
_DECORATOR = re.compile(rb"@[ \t]*([A-Za-z_]\w*)[ \t]*(?:\(|#|\r?$)", re.MULTILINE)
_FROM_IMPORT = re.compile(rb"from[ \t]+([\w.]+)[ \t]+import\b([^\r\n]*)")
_LIBRARY_TOPS = frozenset(name.encode() for name in LIBRARIES)
_WORD = re.compile(rb"\w+")


def _starts_line(source: bytes, position: int) -> bool:
    return not source[source.rfind(b"\n", 0, position) + 1 : position].strip(b" \t")


def _decorates_with_import(source: bytes) -> bool:
    """A bare-name decorator that a ``from`` import of a module outside the libraries binds
    (the name a whole word after that import's ``import``, on its line). One scan for the
    imports, not one per decorator name."""
    if b"@" not in source or b"import" not in source:
        return False
    names = {match.group(1) for match in _DECORATOR.finditer(source) if _starts_line(source, match.start())}
    if not names:
        return False
    for match in _FROM_IMPORT.finditer(source):
        module = match.group(1)
        if (
            (module.startswith(b".") or module.split(b".", 1)[0] not in _LIBRARY_TOPS)
            and not names.isdisjoint(_WORD.findall(match.group(2)))
            and _starts_line(source, match.start())
        ):
            return True
    return False


@dataclass(frozen=True)
class Access:
    """One concrete-only access JAX001 reports: the node, what it reads, and how it is spelled."""

    node: ast.AST
    receiver: ast.AST
    label: str
    param: str | None  # the traced parameter it is read from, or None for an intermediate


class AccessText:
    """The text scans of one member and consumer table.

    ``members``: records with ``name`` and ``positional`` (None for a property);
    ``consumers``: qualified names of functions that need a concrete buffer;
    ``buffer_methods``: method name -> library (`ffi.from_buffer`, `from_buffer_copy`);
    ``ffi_class``: the class whose instances' ``from_buffer`` is a buffer method (`cffi.FFI`).
    """

    def __init__(self, members, consumers: Mapping[str, object], buffer_methods: Mapping[str, str], ffi_class: str):
        self.members = {m.name: m for m in members}
        self.consumers = consumers
        self.buffer_methods = buffer_methods
        self.ffi_class = ffi_class
        self.keeps = frozenset({*TRANSFORMS, PARTIAL, ffi_class})
        self.method_names = tuple(sorted(m.name for m in members if m.positional is not None))
        self.property_names = tuple(sorted(m.name for m in members if m.positional is None))
        self.consumer_names = tuple(sorted({name.rsplit(".", 1)[-1] for name in consumers} | set(buffer_methods)))
        self.builtin_consumers = frozenset(name for name in consumers if "." not in name)
        # Each list of names as one group that branches on letters (``patterns.alternation``): each
        # pattern below tries them at every dot, or every parenthesis, of a file.
        methods, properties = alternation(self.method_names), alternation(self.property_names)
        consumer_words = alternation(self.consumer_names)
        # After the dot: only where one of the names may begin.
        named = starts_of((*self.method_names, *self.property_names, *self.consumer_names, *_TRANSFORM_WORDS))
        spaces = rf"\s*{POSSESSIVE}"
        # The prefilter's question, in two searches the regex engine runs fast: an alternation
        # whose branches start with different letters makes it try a match at nearly every
        # byte. Members start with a dot; consumers end with a parenthesis, so they are
        # searched for in the reversed bytes.
        self._member_bytes = re.compile(rf"\.{spaces}(?:{methods}{spaces}\(|({properties})\b)".encode())
        self._consumer_bytes_reversed = re.compile(
            rf"\({spaces}{alternation(name[::-1] for name in self.consumer_names)}\b(?!\.pnj)".encode()
        )
        # A method or consumer is an access only when called (the parenthesis may follow a
        # comment); a property only when not called (`"{}".format(x)` is no access).
        after_dot = rf"(?:{methods}){_GAP}[(#]|(?:{properties})(?!\w)(?!{_GAP}\()"
        # Either of a member or a consumer after a dot, in one search: a class without it is not cut.
        self.possible_either = re.compile(
            rf"\.{_COMMENTED_GAP}{named}(?:(?:{methods}|{consumer_words}){_GAP}[(#]|(?:{properties})(?!\w)(?!{_GAP}\())"
        )
        # An access, a consumer and a transform's name after a dot, as one pattern for
        # ``Cut.matching_families``: every dot starts the three searches' attempts, so one search
        # costs what each did. Their names differ and each ends at a character no name holds, so at
        # most one of them matches after a dot, with the span its own pattern gives.
        self._dotted_families = re.compile(
            rf"\.{_COMMENTED_GAP}{named}(?:(?P<access>{after_dot})"
            rf"|(?P<consumer>{consumer_words}){_GAP}[(#]|(?P<transform>{alternation(_TRANSFORM_WORDS)})(?!\w))"
        )

        # A consumer a pytree map runs on every leaf (`jax.tree.map(np.asarray, batch)`): passed
        # by name, not called (``mapped_consumer``); JAX's own (`jnp.asarray`, most of those
        # spelled in JAX code) is none. Opens with a literal: searched, not tried.
        mapped = rf"map{_GAP}\({_GAP}(?!(?:jnp|jax\.numpy|lax|jax\.lax)\.)(?:[A-Za-z_][\w.]*\.)?(?:{consumer_words}){_GAP},"
        self._mapped_text = re.compile(mapped)
        self._mapped_bytes = re.compile(mapped.encode())
        # A member named by a string: `getattr(x, "is_fully_replicated", True)`, `hasattr(x,
        # "committed")` (a property's ConcretizationTypeError is no AttributeError: neither
        # swallows it), `getattr(x, "item")()`. Opens with a literal: searched, not tried.
        by_name = alternation(sorted(self.members))
        named_member = rf"attr{_GAP}\((?:[^()\n]|\([^()\n]*\))*?,{_GAP}[\"'](?:{by_name})[\"']"
        self._named_text = re.compile(named_member)
        self._named_bytes = re.compile(named_member.encode())

    def access_pattern(self) -> str:
        """Text that may be an access, as one whitespace-tolerant regex (`x.devices ()`): what
        ``may_access`` answers, the slow way (its tests compare the two)."""
        return (
            rf"\.\s*(?:{'|'.join(self.method_names)})\s*\("
            # `jax.sharding.NamedSharding` is a module path, not an access.
            rf"|(?<!jax)\.\s*(?:{'|'.join(self.property_names)})\b"
            # `jnp.array(x)` is jax's own: traceable.
            rf"|(?<!jnp\.)\b(?:{'|'.join(self.consumer_names)})\s*\("
            rf"|{self._mapped_text.pattern}"
            rf"|\b(?:get|has){self._named_text.pattern}"
        )

    # The prefilter and the lines an access may be on ------------------------------------

    @last_answer
    def may_access(self, source: bytes) -> bool:
        """``re.search(access_pattern().encode(), source) is not None``, several times faster."""
        for match in self._member_bytes.finditer(source):
            if match.group(1) is None or source[max(0, match.start() - 3) : match.start()] != b"jax":
                return True
        return (
            self._consumer_bytes_reversed.search(source[::-1]) is not None
            or (b"map" in source and self._mapped_bytes.search(source) is not None)
            or (b"attr" in source and any(_named_at(source, m.start()) for m in self._named_bytes.finditer(source)))
        )

    def access_lines(self, text: str) -> set[int]:
        """Lines with a member called after a dot (`x.item(`), a property read after a dot but
        not after `jax` (`x.sharding`, not `jax.sharding`), or a consumer called (`np.asarray(`,
        not `jnp.asarray(`), spaces and tabs allowed around the dot and before the parenthesis.

        One regex with a literal first character for the members (the engine searches for the
        dot fast) instead of a str.find per member name over the whole text."""
        positions = [*self._member_positions(text), *called_positions(text, self.consumer_names, not_after="jnp.")]
        positions += self._mapped_positions(text) + self._named_positions(text)
        return lines_of(text, sorted(positions))

    def _mapped_positions(self, text: str) -> list[int]:
        return [match.start() for match in self._mapped_text.finditer(text)] if "map" in text else []

    def _named_positions(self, text: str) -> list[int]:
        """Where `getattr(`/`hasattr(` names a member by a string (the call's start)."""
        if "attr" not in text:
            return []
        return [match.start() - 3 for match in self._named_text.finditer(text) if _named_at(text, match.start())]

    def any_access_line(self, text: str, modules: frozenset[str] = frozenset()) -> bool:
        """``bool(access_lines(text))``, from the first match on; ``modules``: names of modules
        that hold no consumer, whose calls (`jp.array(`) are none."""
        if next(self._member_positions(text), None) is not None or self._mapped_positions(text):
            return True
        if self._named_positions(text):
            return True
        return reversed_calls(frozenset(self.consumer_names), "jnp.", modules).search(text[::-1]) is not None

    @cached_property
    def _member_text(self) -> re.Pattern[str]:
        # Compiled on first use: most runs import the rule and check few files, or none, with it.
        return re.compile(
            rf"\.[ \t]*{POSSESSIVE}(?:({alternation(self.method_names)})(?!\w)[ \t]*{POSSESSIVE}\("
            rf"|({alternation(self.property_names)})(?!\w))"
        )

    def _member_positions(self, text: str):
        for match in self._member_text.finditer(text):
            if match.group(2) is not None and text.endswith("jax", 0, match.start()):
                continue
            yield match.start(1) if match.group(1) is not None else match.start(2)

    # The blocks that can matter (``analysis.partial.Parts``) ------------------------------

    def relevant(self, cut: Cut, base: FileContext, bindings) -> tuple[set[int], set[int]] | None:
        """``Parts.relevant``: (the blocks with access text, those that may spell a transform).

        A finding is an access inside a traced function. The function's block holds the access
        text (a member or consumer name after a dot or at the start of a line, or a name the
        imports bind to a consumer); it is traced by a decorator or a transform call that spells
        the transform (``_transform_blocks``: a chain that resolves to one, an imported or
        assigned alias, a decorator factory), or called from such a function, which names it:
        a chain from the second kind of block to the first. The rule's analysis then finds the
        same traced functions in both trees, at the same lines and columns, and the same
        candidate accesses in them. A block whose access text no function the file can trace
        holds is none (``_untraced_own_level``: most test methods of a JAX test module).
        """
        text = cut.text
        spellings = spellings_of(base)  # (the base's own: the reading's context when nothing is added)
        if any(name in spellings.aliases for name in CONTAINER_CALLS):
            return None  # `dict = jax.jit`: the stubs' reading of `x = dict(...)` may not hold

        def consumer(match: re.Match) -> bool:
            # `np.asarray(x)` is a consumer only where `np` is bound to NumPy: `jnp.asarray(x)` is not.
            head, rest = dotted_before(text, match.start())
            leaf = match.group("consumer")
            target = bindings.get(head) if head is not None else None
            return (
                head is None
                or leaf in self.buffer_methods  # `ffi.from_buffer(`: whether `ffi` is one is read later
                or (isinstance(target, str) and ".".join([target, *rest, leaf]) in self.consumers)
            )

        # The blocks with access text, and those whose attributes spell a transform, in one scan.
        accesses: set[int] = set()
        spelled: set[int] = set()
        cut.matching_families(
            self._dotted_families,
            {
                "access": (1, None, accesses),
                "consumer": (1, consumer, accesses),
                "transform": (0, _spells(text, bindings), spelled),
            },
        )
        # A consumer called by a bare name: `memoryview(x)`, `asarray(x)` after
        # `from numpy import asarray`, `to_np(x)` after `to_np = np.asarray`.
        bare = [n for n, target in bindings.items() if target in self.consumers]
        bare += [n for n in self.builtin_consumers if n not in bindings]
        for name in bare:
            accesses |= cut.naming(name)
        accesses |= cut.blocks_at(self._mapped_positions(text) + self._named_positions(text))
        if accesses:
            accesses -= self._untraced_own_level(cut, accesses, (bare, consumer), bindings, spellings)
        if not accesses:
            return accesses, set()  # whatever is traced, nothing to find
        roots = _transform_blocks(cut, bindings, spellings, spelled)
        return accesses, roots

    def _untraced_own_level(self, cut: Cut, found: set[int], consumers, bindings, spellings: Spellings) -> set[int]:
        """The blocks of ``found`` whose access text can be a finding only in their own
        function, which nothing in the file can trace: a `def` (a module-level function, or a
        method of a class cut into its members) whose decorators spell no transform (no word
        of theirs is a transform's name, a name that may be bound to one or a module-level
        function, which may be a decorator factory: ``_transform_blocks``'s spellings, read
        as words), without a dunder name
        (`__call__`, a protocol's hook: run without being named), whose name is no other word
        of the text, comments and strings included (so no transform, call, `self.name`,
        `method="name"`, `getattr(self, "name")`, override or caller of the file names it),
        and each of whose access texts lies at the function's own level
        (``blocks.at_own_level``): not in a nested `def`, `class` or `lambda`, whose traced
        body would hold it. An access node is in the body of one function only (the
        innermost that holds it), and the analysis reports it only inside a traced one; a
        `def` is traced by its decorators, by a call or transform that names it, or through
        a base class of another module (JAX001 reads such a file whole: ``INHERITED``).
        Most test methods of a JAX test module: `out = jax.jit(f)(x)`, then `out.sharding`.

        The cheap tests first: the decorators; then the name, all candidates' names in one
        count (``words.words_once``: a test module's `test_*` methods in one search); then,
        for a name found once, where the access texts lie: before anything in the block that
        may open a nested scope (``_before_nested_scopes``, a few searches), else by
        ``blocks.at_own_level``'s reading of the body's logical lines."""
        blocks, text = cut.blocks, cut.text
        # A simple statement of the module or of a class body runs in no function (no
        # `lambda` in it: none holds a scope of its own): `P = jax.sharding.PartitionSpec`,
        # `from jax.sharding import Mesh` (which is no access at all, but its text reads as one).
        dropped = {
            i
            for i in found
            if blocks[i].kind in ("assign", "call", "item", "other")
            and simple_statement(text, blocks[i])
            and "lambda" not in text[blocks[i].begin : blocks[i].finish]
        }
        candidates = [i for i in found if blocks[i].kind == "def" and not _dunder(blocks[i].name)]
        spelling = None
        undecorated = []
        for index in candidates:
            block = blocks[index]
            if block.decorated:
                if spelling is None:
                    spelling = _transform_names(bindings, spellings) | _SPELLED_WORDS | {
                        b.name for b in blocks if b.kind == "def" and not b.indent and not b.decorated
                    }
                if not spelling.isdisjoint(WORDS.findall(text, block.begin, block.header)):
                    continue
            undecorated.append(index)
        if not undecorated:
            return dropped
        # Named once (its own `def`): no transform, call or override of the file names it.
        once = words_once(text, {blocks[i].name for i in undecorated}, cut.word_counts)
        for index in undecorated:
            block = blocks[index]
            if block.name not in once:
                continue
            positions = self._positions_in(text, block.begin, block.finish, consumers)
            if _before_nested_scopes(text, block, positions) or at_own_level(
                text, block, positions, cut.interiors, cut.string_starts
            ):
                dropped.add(index)
        return dropped

    def _positions_in(self, text: str, begin: int, finish: int, consumers) -> list[int]:
        """Every position between ``begin`` and ``finish`` where ``relevant`` finds access
        text (more: strings and comments are not skipped). ``consumers``: (the bare names of
        consumers, whether a consumer after a dot is one: ``relevant``'s)."""
        bare, consumer = consumers
        found = [
            m.start()
            for m in self._dotted_families.finditer(text, begin, finish)
            if m.lastgroup == "access" or (m.lastgroup == "consumer" and consumer(m))
        ]
        for name in bare:
            at = text.find(name, begin, finish)
            while at != -1:
                found.append(at)
                at = text.find(name, at + len(name), finish)
        found += [m.start() for m in self._mapped_text.finditer(text, begin, finish)]
        found += [m.start() for m in self._named_text.finditer(text, begin, finish)]
        return found

    def keeps_call(self, qualified: str) -> bool:
        """``Parts.keeps_call``: `J = partial(jax.jit, ...)`, `J = jax.jit(**options)` and
        `ffi = cffi.FFI()` are aliases and FFI objects, which ``Spellings`` and the rule read."""
        return canonical(qualified) in self.keeps

    def cuts_class(self, text: str, begin: int, finish: int) -> bool:
        """``Parts.cuts_class``: a class with no member or consumer name after a dot stays one
        block (most hold no access, and cutting one costs more than stubbing it)."""
        return self.possible_either.search(text, begin, finish) is not None


    # Accesses in the tree -----------------------------------------------------------------

    def as_access(
        self, ctx: FileContext, node: ast.AST, called=frozenset(), members=None, buffers=frozenset()
    ) -> tuple[ast.AST, str] | None:
        """(receiver, label) when ``node`` is a concrete-only access of ``members`` (default:
        the whole table); ``called``: ids of called expressions; ``buffers``: local names of
        cffi ``FFI`` objects (``ffi_names``)."""
        members = self.members if members is None else members
        if isinstance(node, ast.Call):
            func = node.func
            if any(isinstance(a, ast.Starred) for a in node.args):
                return None
            named = _named_member(ctx, func, members)
            if named is not None and named[1].positional is not None and _fits(named[1], node):
                return named[0], f".{named[1].name}()"  # `getattr(x, "item")()`
            named = _named_member(ctx, node, members)
            if named is not None and named[1].positional is None and id(node) not in called:
                receiver, member = named
                # A hidden property's AttributeError is what hasattr and a getattr default
                # catch: only the others' errors get through them.
                if member.error != UNAVAILABLE or (node.func.id == "getattr" and len(node.args) == 2):
                    return receiver, f".{member.name}"
            if isinstance(func, ast.Attribute):
                member = members.get(func.attr)
                if member is not None and member.positional is not None and _fits(member, node):
                    return func.value, f".{func.attr}()"
                library = self.buffer_methods.get(func.attr)
                if node.args and (
                    (library == "cffi" and isinstance(func.value, ast.Name) and func.value.id in buffers)
                    or (library == "ctypes" and _under(ctx, func.value, "ctypes"))
                ):
                    return node.args[-1 if library == "cffi" else 0], f"{ast.unparse(func)}()"
            if node.args and self.consumer(ctx, func) is not None:
                return node.args[0], f"{ast.unparse(func)}()"
            if self.mapped_consumer(ctx, node) is not None:
                # Shown as written, the tree last: `jax.tree.map(np.asarray, batch)`.
                return node.args[1], f"{ast.unparse(func)}({ast.unparse(node.args[0])}, )"
            return None
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and id(node) not in called:
            member = members.get(node.attr)
            if member is not None and member.positional is None:
                return node.value, f".{node.attr}"
        return None

    def consumer(self, ctx: FileContext, func: ast.AST):
        """The consumer table's record of the function ``func`` names, or None."""
        if isinstance(func, ast.Name) and func.id in self.builtin_consumers:
            return None if ctx.is_bound(func.id) else self.consumers[func.id]
        qualified = ctx.qualname(func)
        return self.consumers.get(qualified) if qualified else None

    def mapped_consumer(self, ctx: FileContext, call: ast.Call):
        """The consumer table's record of the function a pytree map runs on every leaf of one
        tree (`jax.tree.map(np.asarray, batch)`), or None."""
        args = call.args
        if len(args) != 2 or any(k.arg is None for k in call.keywords) or isinstance(args[1], ast.Starred):
            return None
        if not isinstance(args[0], (ast.Name, ast.Attribute)) or canonical(ctx.qualname(call.func)) not in TREE_MAPS:
            return None
        return self.consumer(ctx, args[0])

    def ffi_names(self, ctx: FileContext) -> frozenset[str]:
        """Module-level names of cffi ``FFI`` objects: ``ffi = cffi.FFI()`` or the ``ffi`` of a
        compiled cffi module (``from ._lib import ffi``)."""
        names = set()
        for statement in ctx.tree.body:
            if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Call):
                if ctx.qualname(statement.value.func) == self.ffi_class:
                    names.update(t.id for t in statement.targets if isinstance(t, ast.Name))
            elif isinstance(statement, ast.ImportFrom):
                names.update(a.asname or a.name for a in statement.names if a.name == "ffi")
        return frozenset(names)


def _before_nested_scopes(text: str, block, positions) -> bool:
    """Whether each of ``positions`` in the `def` block ``block`` lies before anything in it that
    may open a nested scope: no `lambda` among its decorators, and no `def`, `class` or `lambda`
    word nor `@` (a nested function's decorators) from its own `def` to the last position.
    Every nested scope's text (a nested `def`'s decorators included) begins at one of those,
    so a node there is in the function's own signature or body (its decorators and signature
    are evaluated in the scope around it, a module's or a class's): what ``blocks.at_own_level``
    says True of, found with a few searches where that reads the body's logical lines (and is
    unsure of a backslash or a tab). Strings and comments are searched too: more is found,
    never less."""
    if not positions:
        return True
    last = max(positions)
    if last >= block.finish or find_word(text, "lambda", block.begin, block.header) != -1:
        return False
    own = find_word(text, "def", block.header, block.finish)
    if own == -1:
        return False
    if own > last:
        return True  # all in its decorators, which hold no `lambda`
    start = own + 3
    if text.find("@", start, last + 1) != -1:
        return False
    # (Each word searched for where it would begin at or before the last position.)
    return all(find_word(text, word, start, last + len(word)) == -1 for word in ("def", "class", "lambda"))


def _dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def _named_at(text: str | bytes, position: int) -> bool:
    """Whether the `attr(` match at ``position`` is `getattr(` or `hasattr(` as a whole word."""
    head = text[max(0, position - 4) : position]
    word = head[1:] if len(head) == 4 else head
    if isinstance(text, bytes):
        return word in (b"get", b"has") and (len(head) < 4 or not (head[:1].isalnum() or head[:1] == b"_"))
    return word in ("get", "has") and (len(head) < 4 or not (head[0].isalnum() or head[0] == "_"))


def _named_member(ctx: FileContext, node: ast.AST, members):
    """(receiver, member) for `getattr(x, "name"[, default])` or `hasattr(x, "name")` of a
    table member, the builtins not rebound; None otherwise."""
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("getattr", "hasattr")
        and not node.keywords
        and 2 <= len(node.args) <= (3 if node.func.id == "getattr" else 2)
        and isinstance(node.args[1], ast.Constant)
        and isinstance(node.args[1].value, str)
        and not any(isinstance(a, ast.Starred) for a in node.args)
    ):
        return None
    member = members.get(node.args[1].value)
    if member is None or ctx.is_bound(node.func.id):
        return None
    return node.args[0], member


def _fits(member, call: ast.Call) -> bool:
    """Whether ``call`` passes what makes ``member``'s method need a concrete array."""
    fewest, most = member.positional
    if len(call.args) < fewest or (most is not None and len(call.args) > most):
        return False
    return member.unless is None or not any(k.arg in (member.unless, None) for k in call.keywords)


def _under(ctx: FileContext, expr: ast.AST, module: str) -> bool:
    """Whether ``expr`` is a name from ``module`` or an array type built from one (`c_char * n`)."""
    if isinstance(expr, ast.BinOp):
        return _under(ctx, expr.left, module)
    qualified = ctx.qualname(expr) if isinstance(expr, (ast.Name, ast.Attribute)) else None
    return qualified is not None and qualified.startswith(module + ".")


def _spells(text: str, bindings):
    """accept(match) for a transform's name after a dot (the "transform" family): whether the
    dotted name there spells a transform (`jax.jit`, `lax.scan`; not `jax.tree.map`)."""

    def spells(match: re.Match) -> bool:
        head, rest = dotted_before(text, match.start())
        if head is None:
            return True  # cannot tell: count it
        target = bindings.get(head)
        return isinstance(target, str) and canonical(".".join([target, *rest, match.group("transform")])) in TRANSFORMS

    return spells


def _transform_names(bindings, spellings: Spellings) -> set[str]:
    """Bare names that may spell a transform: bound to one (`from jax import jit as J`), an
    alias (`J = jax.jit`, `J = partial(jax.jit, ...)`) or a name imported from the project."""
    # (`canonical` keeps the last part of a name: a cheap test first.)
    names = {
        n
        for n, target in bindings.items()
        if isinstance(target, str) and target.rpartition(".")[2] in TRANSFORM_LEAVES and canonical(target) in TRANSFORMS
    }
    return names | set(spellings.aliases) | spellings.imported_names


def _transform_blocks(cut: Cut, bindings, spellings: Spellings, spelled: set[int]) -> set[int]:
    """The blocks that may spell a transform: a dotted name ending in a transform's name whose
    head the imports bind (`jax.jit`, `lax.scan`, `eqx.filter_jit`; one the text does not show
    plainly counts too), a bare name bound to one (`from jax import jit as J`, `J = jax.jit`,
    `J = partial(jax.jit, ...)`), or a decorator factory's name. `partial` alone traces
    nothing: `partial(jax.jit, ...)` spells `jax.jit` too. ``spelled``: the first kind's
    blocks (``relevant`` finds them in its one scan)."""
    live = set(spelled)
    names = _transform_names(bindings, spellings)
    for name in names:
        live |= cut.naming(name)
    # Factories: module-level functions without decorators that spell a transform.
    blocks = cut.blocks
    factories = {
        blocks[i].name for i in live if blocks[i].kind == "def" and not blocks[i].decorated and not blocks[i].indent
    }
    for name in factories - names:
        live |= cut.naming(name)
    return live
