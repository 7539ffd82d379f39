"""JAX001: concrete-only array APIs called on tracers inside a traced function."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from jax_codemod.analysis import api, tracing
from jax_codemod.analysis.blocks import CONTAINER_CALLS
from jax_codemod.analysis.context import (
    FileContext,
    count_line_breaks,
)
from jax_codemod.analysis.jax_versions import OLDEST_SUPPORTED
from jax_codemod.analysis.names import canonical as public
from jax_codemod.analysis.partial import Cut, Parts, Reading, dotted_before, word_positions
from jax_codemod.analysis.partial_receivers import PartialReceivers
from jax_codemod.analysis.tracing import (
    ASYNC,
    BY_CALL,
    CALLED_IN_TRACE,
    OTHER_DECORATORS,
    TRACED_TWICE,
    Region,
    Reported,
    Traced,
    first_compound_line,
    mentions,
    own_nodes,
    param_root,
    tracing_for,
)
from jax_codemod.analysis.transforms import (
    JIT_LIKE,
    PARTIAL,
    TRANSFORM_LEAVES,
    TRANSFORMS,
    Spellings,
    all_params,
)
from jax_codemod.rule import Finding, FixSafety, Rule
from jax_codemod.rules._hoist import plan_split, split

if TYPE_CHECKING:
    import libcst as cst

# What reading or calling a concrete-only member on a tracer raises.
CONCRETIZATION, ARRAY_CONVERSION, UNAVAILABLE = api.CONCRETIZATION, api.ARRAY_CONVERSION, api.UNAVAILABLE
Version = tuple[int, ...]
OLDEST: Version = OLDEST_SUPPORTED


@dataclass(frozen=True)
class Member:
    """A member of ``jax.core.Tracer`` that needs a concrete array, over a range of JAX versions.

    ``positional``: (fewest, most) positional arguments of a method (most None: any), or
    None for a property. ``unless``: a keyword that makes the call traceable
    (``x.nonzero(size=n)``). ``since``/``until``: the first JAX version where a concrete
    array has the member and a tracer raises ``error``, and the first where that stops.
    """

    name: str
    positional: tuple[int, int | None] | None
    error: str = CONCRETIZATION
    since: Version = OLDEST
    until: Version | None = None
    unless: str | None = None
    # Works on the tracers of differentiation alone (grad, jvp, vjp, ...), whose primal values
    # are concrete: `x.item()` in a function only `jax.grad` traces.
    differentiable: bool = False


# The one table of concrete-only members, checked against the installed JAX (every public
# member and DLPack/NumPy protocol method of jax.core.Tracer, called on a real tracer inside
# jax.jit) by tests/test_traced_concrete_access.py::test_member_table_matches_installed_jax.
TRACER_MEMBERS: tuple[Member, ...] = (
    Member("unsafe_buffer_pointer", (0, 0)),
    Member("on_device_size_in_bytes", (0, 0)),
    Member("devices", (0, 0)),
    Member("delete", (0, 0)),
    Member("is_deleted", (0, 0)),
    Member("addressable_data", (1, 1)),
    Member("tolist", (0, 0)),
    Member("tobytes", (0, 1)),
    Member("item", (0, None), differentiable=True),
    Member("nonzero", (0, 0), unless="size", differentiable=True),
    Member("__dlpack__", (0, 0)),
    Member("__array__", (0, 2), ARRAY_CONVERSION),
    Member("__reduce__", (0, 0)),
    Member("addressable_shards", None),
    Member("global_shards", None),
    Member("is_fully_addressable", None),
    Member("is_fully_replicated", None),
    Member("traceback", None),
    Member("committed", None, since=(0, 4, 35)),  # jax/_src/array.py gained it in 0.4.35
    Member("sharding", None, UNAVAILABLE),
    Member("device", None, UNAVAILABLE, since=(0, 4, 31)),  # a property of jax.Array from 0.4.31
    Member("block_until_ready", (0, 0), UNAVAILABLE),
    Member("copy_to_host_async", (0, 0), UNAVAILABLE),
    Member("__dlpack_device__", (0, 0), UNAVAILABLE),
    # jax.Array members a tracer lacks altogether (jaxlib's ArrayImpl, jax/_src/array.py).
    Member("is_ready", (0, 0), UNAVAILABLE),
    Member("platform", (0, 0), UNAVAILABLE),
    Member("clone", (0, 0), UNAVAILABLE),
    # renamed `format` in 0.6.2, which keeps `layout = format` as an alias; 0.7.0 drops the alias
    Member("layout", None, UNAVAILABLE, until=(0, 7, 0)),
    Member("format", None, UNAVAILABLE, since=(0, 6, 2)),
    # jaxlib's ArrayImpl method; seen on the 0.12.0.1 wheel, absent from 0.10.2 (0.11 not checked).
    Member("unsafe_raw_buffer", (0, 0), UNAVAILABLE, since=(0, 12, 0)),
)


# Transforms that only differentiate: their tracers carry concrete primal values, so a member
# marked ``differentiable`` works under them (checked against the installed JAX, each of them,
# by tests/test_traced_concrete_access.py::test_differentiation_table_matches_installed_jax).
DIFFERENTIATION = api.public_names(differentiates=True)


def members_for(version: Version | None) -> dict[str, Member]:
    """The concrete-only members of JAX ``version`` (None: of every supported version)."""
    return {
        m.name: m
        for m in TRACER_MEMBERS
        if version is None or (m.since <= version and (m.until is None or version < m.until))
    }


def members_in(target) -> dict[str, Member]:
    """The concrete-only members of any release in ``target`` (a jax_versions.Range; None: of every
    supported version): code that reaches one breaks on the releases that have it."""
    if target is None:
        return members_for(None)
    thresholds = {m.since for m in TRACER_MEMBERS} | {m.until for m in TRACER_MEMBERS if m.until}
    found: dict[str, Member] = {}
    for point in target.points(thresholds):
        found.update(members_for(point))
    return found


@dataclass(frozen=True)
class Consumer:
    """A function that needs a concrete buffer; ``error``: what it raises on a tracer."""

    error: str
    argument: int = 0  # the position of the array among the call's arguments


# Qualified name -> what it raises given a tracer (checked with the installed libraries by
# tests/test_traced_concrete_access.py::test_consumer_table_matches_the_libraries).
CONSUMERS: dict[str, Consumer] = {name: Consumer(error) for name, error in api.table("tracer_error").items()}
# Buffer-protocol helpers called as methods: `ffi.from_buffer([cdecl,] x)` on a cffi.FFI
# (the array is the last positional argument) and `(ctypes.c_char * n).from_buffer_copy(x)`.
CFFI_FFI = "cffi.FFI"
BUFFER_METHODS = {"from_buffer": "cffi", "from_buffer_copy": "ctypes"}
# The tracing answer's tables, by the names this rule's tests compare with the API table.
STATIC_ATTRS, ARRAY_MODULES, TREE_MAPS, TREE_LEAVES = (
    tracing.STATIC_ATTRS, tracing.ARRAY_MODULES, tracing.TREE_MAPS, tracing.TREE_LEAVES
)
CREATION_FUNCTIONS, SHAPE_FUNCTIONS = tracing.CREATION_FUNCTIONS, tracing.SHAPE_FUNCTIONS


def _access_pattern(members) -> str:
    """Text that may be an access: found with one regex, whitespace-tolerant (`x.devices ()`)."""
    methods = sorted(m.name for m in members if m.positional is not None)
    properties = sorted(m.name for m in members if m.positional is None)
    consumers = sorted({name.rsplit(".", 1)[-1] for name in CONSUMERS} | set(BUFFER_METHODS))
    return (
        rf"\.\s*(?:{'|'.join(methods)})\s*\("
        # `jax.sharding.NamedSharding` is a module path, not an access.
        rf"|(?<!jax)\.\s*(?:{'|'.join(properties)})\b"
        # `jnp.array(x)` is jax's own: traceable.
        rf"|(?<!jnp\.)\b(?:{'|'.join(consumers)})\s*\("
    )


_DECORATED_DEF = re.compile(r"^[ \t]*@.*\n(?:[ \t]*(?:@.*|#.*)?\n)*[ \t]*(?:async[ \t]+)?def\b", re.MULTILINE)
_METHOD_NAMES = tuple(sorted(m.name for m in TRACER_MEMBERS if m.positional is not None))
_PROPERTY_NAMES = tuple(sorted(m.name for m in TRACER_MEMBERS if m.positional is None))
_CONSUMER_NAMES = tuple(sorted({name.rsplit(".", 1)[-1] for name in CONSUMERS} | set(BUFFER_METHODS)))
_ACCESS_BYTES = re.compile(_access_pattern(TRACER_MEMBERS).encode())
# A file must name one of these to trace anything: jax's transforms and `lax`, equinox's
# filter_* and flax's lifted ones all contain one of them.
_TRANSFORM_BYTES = re.compile(rb"jit|vmap|pmap|grad|jac|hessian|checkpoint|remat|shard_map|jvp|vjp|linearize|lax")
_TRANSFORM_SPELLINGS = tuple(_TRANSFORM_BYTES.pattern.split(b"|"))
# _ACCESS_BYTES, in two searches the regex engine runs fast: an alternation whose branches
# start with different letters makes it try a match at nearly every byte. Members start with
# a dot; consumers end with a parenthesis, so they are searched for in the reversed bytes.
_MEMBER_BYTES = re.compile(
    rb"\.\s*(?:(?:" + "|".join(_METHOD_NAMES).encode() + rb")\s*\(|(" + "|".join(_PROPERTY_NAMES).encode() + rb")\b)"
)
_CONSUMER_BYTES_REVERSED = re.compile(
    rb"\(\s*(?:" + "|".join(name[::-1] for name in _CONSUMER_NAMES).encode() + rb")\b(?!\.pnj)"
)


# The transform spellings as the prefilter scans for them: the ones most files that trace
# anything contain first (one short scan each), the rest only for a file without them.
_TRANSFORMS_COMMON_FIRST = (b"lax", b"jit", b"checkpoint", b"grad", b"vmap") + tuple(
    spelling for spelling in _TRANSFORM_SPELLINGS if spelling not in (b"lax", b"jit", b"checkpoint", b"grad", b"vmap")
)


def _may_access(source: bytes) -> bool:
    """``_ACCESS_BYTES.search(source) is not None``, several times faster."""
    for match in _MEMBER_BYTES.finditer(source):
        if match.group(1) is None or source[max(0, match.start() - 3) : match.start()] != b"jax":
            return True
    return _CONSUMER_BYTES_REVERSED.search(source[::-1]) is not None


def _names_transform(source: bytes) -> bool:
    for spelling in _TRANSFORMS_COMMON_FIRST:
        if spelling in source:
            return True
    return False


@dataclass(frozen=True)
class Access:
    node: ast.AST
    receiver: ast.AST
    label: str
    param: str | None  # the traced parameter it is read from, or None for an intermediate


class TracedConcreteAccess(Rule):
    """## What it does
    Finds concrete-only `jax.Array` APIs used on tracers inside a traced function: every
    member of `jax.core.Tracer` that raises `ConcretizationTypeError` or a sibling
    (`unsafe_buffer_pointer()`, `on_device_size_in_bytes()`, `tolist()`, `tobytes()`,
    `item()`, `nonzero()` without `size=`, `devices()`, `delete()`, `addressable_data()`,
    `__dlpack__()`, `__array__()`, `addressable_shards`, `global_shards`,
    `is_fully_addressable`, `is_fully_replicated`, `committed`, `traceback`), the ones a
    tracer hides (`sharding`, `device`, `block_until_ready()`, `is_ready()`,
    `__dlpack_device__()`, `format`), and consumers that need a concrete buffer
    (`torch.from_dlpack`/`as_tensor`/`tensor`/`asarray`, NumPy's `asarray`/`array`/
    `from_dlpack`/`frombuffer`, CuPy, `memoryview`, `bytes`, `pickle`, cffi's
    `ffi.from_buffer`, ctypes' `from_buffer_copy`). The table is keyed by JAX version and
    checked against the installed JAX. Traced functions are found however they are
    spelled: `jax.jit` and its aliases, `functools.partial(jax.jit, ...)`, `@jax.jit(...)`,
    decorator factories, `jax.jit(f)` and `jax.jit(self._step)` calls, jitted dicts and
    comprehensions, `equinox.filter_jit`, `flax.nnx.jit`, the other transforms (`vmap`,
    `grad`, `pmap`, `shard_map`, `checkpoint`, `lax` control flow, equinox's and flax's),
    helpers called from inside a trace, and the pytree leaves of a traced argument.

    ## Why is this bad?
    Inside a trace the arguments are abstract tracers with no buffer behind them: these
    calls raise `ConcretizationTypeError` (or `TracerArrayConversionError`,
    `AttributeError` or `TypeError` for NumPy, DLPack and buffer-protocol consumers) the
    first time the function is traced. Static attributes (`shape`, `dtype`, `ndim`,
    `size`), values captured from module or closure scope, static arguments, unmapped
    (`in_axes=None`) and undifferentiated arguments, and the arrays host callbacks
    (`jax.pure_callback`, `jax.debug.callback`, `io_callback`) receive are concrete and
    are not reported; nor are `item()` and `nonzero()` in a function only differentiated
    (`jax.grad`, `jvp`, `vjp`, ... alone: a JVP tracer's primal is concrete), nor values
    computed from constants inside `with jax.ensure_compile_time_eval():`.

    ## Example
    ```python
    import jax


    @jax.jit
    def step(x, scale):
        lib.register(x.unsafe_buffer_pointer())
        return x * scale
    ```

    ## Use instead
    ```python
    import jax


    @jax.jit
    def _step_traced(x, scale):
        return x * scale


    def step(x, scale):
        lib.register(x.unsafe_buffer_pointer())
        return _step_traced(x, scale)
    ```

    ## Fix safety
    Safe when the accesses are side-effect statements (or a `for` loop over an argument or
    its pytree leaves, or a `with jax.named_scope(...)` block, made of them) of a function
    decorated by `jax.jit`, `equinox.filter_jit` or `flax.nnx.jit` in any spelling (aliases,
    `functools.partial`, factories, `@jax.jit(...)`, with `jax.named_call`/`named_scope`
    decorators alongside), that read only its parameters, module or closure names and
    locals computed from shapes, dtypes and static arguments (`n = x.shape[0]`, repeated in
    the wrapper), and whose assigned names feed nothing but other hoisted statements. The
    fix keeps the traced body under a private name with the same decorators and puts a
    plain wrapper with the original name and signature in front of it: the hoisted
    statements run on the concrete arguments on every call (the original would have run
    them once per trace, and failed), then the wrapper forwards every argument. Methods
    forward through `self`. `@jax.jit(...)` (JAX 0.8.1+) becomes
    `@functools.partial(jax.jit, ...)` on the traced copy, so the fixed file runs on every
    supported JAX. A comment right above a hoisted statement, and its trailing comment, move
    with it; a comment set off by a blank line describes the traced computation and stays.
    Call sites keep working; attributes of the jitted object (`step.lower(...)`) are no
    longer on the wrapper, so a file that uses them is reported instead, and uses in other
    files are not seen. The fix is unsafe when a non-static parameter has a default other
    than `None` (forwarded explicitly, it becomes a traced argument instead of a Python
    constant) or when an accessed argument is donated (the hoisted pointer or export
    outlives the donated buffer). When the value flows into the traced computation or the
    result, is read from an intermediate of the trace, the function is traced by `vmap`,
    `grad`, `pmap`, `shard_map`, `checkpoint`, a `lax` control-flow body, a lifted linen
    transform or a `jax.jit(f)` call (where `f` may also run eagerly), or it is a helper
    called from inside a trace, the rule reports without a fix.
    """

    CODE = "JAX001"
    NAME = "traced-concrete-access"
    DEFAULT_ENABLED = True
    FIX_SAFETY = FixSafety.SAFE
    # The member and consumer names; prefilter() also wants a transform named in the file.
    TRIGGERS = tuple(sorted({m.name.encode() for m in TRACER_MEMBERS} | {c.rsplit(".", 1)[-1].encode() for c in CONSUMERS}))

    # prefilter() below: a file that never names jax traces nothing.
    REQUIRES = (b"jax",)
    # check(): a partial reading first, unless the tree is parsed already (the functions are below).
    PARTS = Parts(
        relevant=lambda cut, base, bindings: _relevant_blocks(cut, base, bindings),
        keeps_call=lambda qualified: _may_alias(qualified),
        cuts_class=lambda text, begin, finish: _cuts_class(text, begin, finish),
        unliftable=("ffi",),  # ``_ffi_names`` reads module-level imports only
        # A partial tree that would hold more than this share of the text costs about what the
        # whole tree costs, and files that JAX-heavy are the ones whose receivers only the
        # whole-file value analysis judges (then both are parsed): such a file is read whole.
        most=0.85,
    )
    RAISES = (CONCRETIZATION,)
    TRACE_ONLY = True  # the same function run eagerly works: a test may assert only the trace fails

    def prefilter(self, source: bytes) -> bool:
        # A finding needs both a concrete-only access or consumer and a transform (every
        # transform is jax's or a library's built on it: a file without "jax" traces nothing).
        return (
            b"jax" in source
            and _names_transform(source)
            and _may_access(source)
        )

    def check(self, ctx: FileContext) -> list[Finding]:
        # Most files are decided clean from their blocks before their access lines matter:
        # those are found only once a kept block may hold a traced access.
        if self.clean_from_parts(ctx):
            return []
        members = members_in(_target_version(self.options))
        access_lines = _access_lines(ctx.text)
        if not access_lines:
            return []
        return [
            finding
            for traced, accesses, region in _analyse(ctx, access_lines, members)
            for finding in self._check_function(ctx, region, traced, accesses)
        ]

    def clean_in(self, reading: Reading) -> bool:
        """Whether the blocks that can matter show there is no finding (``Rule.clean_in``).

        Most files that get here have none, and parsing all of one costs more than the rest
        of the check. On any doubt (a receiver only the whole-file value analysis judges, a
        candidate access) the answer is False and the whole file is read.
        """
        # A file without access lines has no finding (check() stops there, even where an
        # aliased consumer is called: `to_host(x)`)...
        if not _any_access_line(reading.cut.text):
            return True
        # ...and the partial text is the file's at the kept blocks' lines, stubs (no dot, no
        # call) elsewhere: its access lines are the file's in the kept blocks, the only ones an
        # access of the partial tree can be on, found in a fraction of the text.
        partial = reading.context
        members = members_in(_target_version(self.options))
        try:
            return not _analyse(
                partial, _access_lines(partial.text), members, exact=_Receivers(reading.cut.text, partial.tree, reading.cut)
            )
        except _Undecided:
            return False

    def _check_function(
        self, ctx: FileContext, region, traced: Traced, accesses: list[Access]
    ) -> list[Finding]:
        plan, fix, reason = None, FixSafety.NONE, None
        if traced.transform in JIT_LIKE and traced.obstacle is None:
            plan, fix, reason = plan_split(ctx, region, traced, accesses)
            if plan and any(ctx.is_suppressed(self.CODE, ctx.span(a.node).start_line) for a in accesses):
                # Splitting would move the suppressed access too.
                plan, fix, reason = None, FixSafety.NONE, "another access in it is suppressed"
        return [
            self.finding(
                ctx,
                access.node,
                _message(traced, access, fix, reason),
                fix,
                node_type=type(access.node).__name__,
                data=(plan,) if plan else (),
                raises=(_access_error(ctx, access),),
            )
            for access in accesses
        ]

    def rewrite(self, original, updated, finding: Finding, fixer):
        # The access itself stays; the function around it is split once, in finalize.
        plan = finding.data[0]
        partial = fixer.reference_code("functools.partial") if plan.jit_options else None
        fixer.state.setdefault(self.CODE, {})[plan.key] = (plan, partial)
        return updated

    def finalize(self, module: cst.Module, fixer) -> cst.Module:
        plans = fixer.state.get(self.CODE)
        if not plans:
            return module
        new_module, done = split(module, plans)
        if not done:
            raise ValueError(f"no function at {sorted(plans)}")
        # A plan deferred because a function inside it was split is found again next pass.
        return new_module


def _access_lines(text: str) -> set[int]:
    """Lines with a member called after a dot (`x.item(`), a property read after a dot but
    not after `jax` (`x.sharding`, not `jax.sharding`), or a consumer called (`np.asarray(`,
    not `jnp.asarray(`), spaces and tabs allowed around the dot and before the parenthesis.

    One regex with a literal first character for the members (the engine searches for the
    dot fast) instead of a str.find per member name over the whole text."""
    positions = [*_member_positions(text), *_called_positions(text, _CONSUMER_NAMES, not_after="jnp.")]
    return _lines_of(text, sorted(positions))


def _member_positions(text: str):
    """Where ``_access_lines``' members are, one after the other."""
    for match in _member_text().finditer(text):
        if match.group(2) is not None and text.endswith("jax", 0, match.start()):
            continue
        yield match.start(1) if match.group(1) is not None else match.start(2)


def _any_access_line(text: str) -> bool:
    """``bool(_access_lines(text))``, from the first match on."""
    if next(_member_positions(text), None) is not None:
        return True
    return _reversed_calls(frozenset(_CONSUMER_NAMES), "jnp.").search(text[::-1]) is not None


@cache
def _reversed_calls(words: frozenset[str], not_after: str) -> re.Pattern[str]:
    names = "|".join(sorted((w[::-1] for w in words), key=lambda w: (-len(w), w)))
    guard = f"(?!{re.escape(not_after[::-1])})" if not_after else ""
    return re.compile(rf"\([ \t]*(?:{names})(?!\w){guard}")


def _called_positions(text: str, words, not_after: str = "") -> list[int]:
    """Where one of ``words`` is called (`word (`, not `xword(`), not right after
    ``not_after``: ``_word_lines(text, words, call=True, not_after=...)``'s positions.

    Searched in the reversed text, where the parenthesis comes first: a regex whose branches
    start with a literal runs at the engine's speed, one str.find per word over the text
    (tens of them: the transforms' names) does not.
    """
    if not words:
        return []
    last = len(text) - 1
    return [last - (match.end() - 1) for match in _reversed_calls(frozenset(words), not_after).finditer(text[::-1])]


@cache
def _member_text() -> re.Pattern[str]:
    # Compiled on first use: most runs import the rule and check few files, or none, with it.
    return re.compile(
        rf"\.[ \t]*(?:({'|'.join(_METHOD_NAMES)})(?!\w)[ \t]*\(|({'|'.join(_PROPERTY_NAMES)})(?!\w))"
    )


class _Undecided(Exception):
    """A question about a partial tree that only the whole file's value analysis answers."""


def _analyse(ctx: FileContext, access_lines: set[int], members, exact: bool = True):
    """(traced function, its accesses, the region) for each traced function with an access.

    ``exact=False``: ``ctx`` is a partial context (``analysis.partial``); an access whose
    receiver only the whole-file value analysis can judge raises ``_Undecided``.
    """
    spellings = Spellings(ctx)
    region = _candidate_region(ctx, access_lines, spellings)
    buffers = _ffi_names(ctx)
    found = []
    for traced in _traced_functions(ctx, region, spellings):
        accesses = _accesses(ctx, traced, members, buffers, exact)
        if accesses:
            found.append((traced, accesses, region))
    return found


def _candidate_region(ctx: FileContext, access_lines: set[int], spellings: Spellings) -> _Region:
    # Decorated functions too: a helper with an access may be called from one.
    candidates = access_lines | _lines_of(ctx.text, sorted(_called_positions(ctx.text, spellings.call_names)))
    if "\r" in ctx.text:
        # `_decorated_def_lines` reads `\n` line ends only; a file with old Mac ones (rare) asks
        # the tree: a jitted function without candidate lines of its own was missed there.
        decorated = {
            node.lineno
            for node in ast.walk(ctx.tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.decorator_list
        }
    else:
        decorated = _decorated_def_lines(ctx.text)
    return _Region(ctx.tree, sorted(candidates | decorated))


def candidate_accesses(ctx: FileContext, members, judged: bool = False) -> set[tuple]:
    """The traced functions of ``ctx`` that hold a node the rule checks as an access, each as
    (line, column, transform, traced parameters, why it is unsplittable, the caller it is a
    helper of, the positions of those nodes); ``judged``: only the accesses whose receivers may
    be tracers (those ``check`` reports). What a partial reading must find as the whole file
    does: its tests compare the two."""
    found = set()
    if judged:
        for traced, accesses, _ in _analyse(ctx, _access_lines(ctx.text), members):
            node = traced.node
            positions = tuple(sorted((a.node.lineno, a.node.col_offset) for a in accesses))
            found.add((node.lineno, node.col_offset, traced.transform, tuple(sorted(traced.traced)),
                       traced.unsplittable, traced.caller, positions))
        return found
    spellings = Spellings(ctx)
    region = _candidate_region(ctx, _access_lines(ctx.text), spellings)
    buffers = _ffi_names(ctx)
    for traced in _traced_functions(ctx, region, spellings):
        nodes = list(_scope_nodes(traced.node))
        called = {id(n.func) for n in nodes if isinstance(n, ast.Call)}
        positions = tuple(
            sorted((n.lineno, n.col_offset) for n in nodes if _as_access(ctx, n, called, members, buffers) is not None)
        )
        if positions:
            node = traced.node
            found.add((node.lineno, node.col_offset, traced.transform, tuple(sorted(traced.traced)),
                       traced.unsplittable, traced.caller, positions))
    return found


# The blocks that can matter (JAX001's declaration of ``analysis.partial``) -------------------

# Text that may spell an access in the tree, whatever the whitespace, line breaks and
# comments around the dot: `x.\n    item()`, `x. \\\n item()`, and a name that starts a line
# (after a comment that ends the line with the dot on it).
_METHOD_WORDS = "|".join(_METHOD_NAMES)
_CONSUMER_WORDS = "|".join(_CONSUMER_NAMES)
_PROPERTY_WORDS = "|".join(_PROPERTY_NAMES)
_GAP = r"(?:\s|\\)*"  # whitespace, line breaks and backslash continuations
# `x.  # why\n    item()`: a comment may sit between the dot and the name, inside brackets.
_COMMENTED_GAP = rf"{_GAP}(?:#[^\n]*\n{_GAP})*"
# A method or consumer is an access only when called (the parenthesis may follow a comment);
# a property only when not called (`"{}".format(x)` is no access).
_ACCESS_AFTER_DOT = rf"(?:{_METHOD_WORDS}){_GAP}[(#]|(?:{_PROPERTY_WORDS})(?!\w)(?!{_GAP}\()"
# Either of a member or a consumer after a dot, in one search: a class without it is not cut.
_POSSIBLE_EITHER = re.compile(
    rf"\.{_COMMENTED_GAP}(?:(?:{_METHOD_WORDS}|{_CONSUMER_WORDS}){_GAP}[(#]|(?:{_PROPERTY_WORDS})(?!\w)(?!{_GAP}\())"
)
_TRANSFORM_WORDS = "|".join(sorted(TRANSFORM_LEAVES - {"partial"}))
# An access, a consumer and a transform's name after a dot, as one pattern for
# ``Cut.matching_families``: every dot starts the three searches' attempts, so one search
# costs what each did. Their names differ and each ends at a character no name holds, so at
# most one of them matches after a dot, with the span its own pattern gives.
_DOTTED_FAMILIES = re.compile(
    rf"\.{_COMMENTED_GAP}(?:(?P<access>{_ACCESS_AFTER_DOT})"
    rf"|(?P<consumer>{_CONSUMER_WORDS}){_GAP}[(#]|(?P<transform>{_TRANSFORM_WORDS})(?!\w))"
)


def _relevant_blocks(cut: Cut, base: FileContext, bindings) -> tuple[set[int], set[int]] | None:
    """JAX001's ``Parts.relevant``: (the blocks with access text, those that may spell a
    transform).

    A finding is an access inside a traced function. The function's block holds the access
    text (a member or consumer name after a dot or at the start of a line, or a name the
    imports bind to a consumer); it is traced by a decorator or a transform call that spells
    the transform (``_transform_blocks``: a chain that resolves to one, an imported or
    assigned alias, a decorator factory), or called from such a function, which names it:
    a chain from the second kind of block to the first. The rule's analysis then finds the
    same traced functions in both trees, at the same lines and columns, and the same
    candidate accesses in them.
    """
    text = cut.text
    spellings = Spellings(base)
    if any(name in spellings.aliases for name in CONTAINER_CALLS):
        return None  # `dict = jax.jit`: the stubs' reading of `x = dict(...)` may not hold

    def consumer(match: re.Match) -> bool:
        # `np.asarray(x)` is a consumer only where `np` is bound to NumPy: `jnp.asarray(x)` is not.
        head, rest = dotted_before(text, match.start())
        leaf = match.group("consumer")
        target = bindings.get(head) if head is not None else None
        return (
            head is None
            or leaf in BUFFER_METHODS  # `ffi.from_buffer(`: whether `ffi` is one is read later
            or (isinstance(target, str) and ".".join([target, *rest, leaf]) in CONSUMERS)
        )

    # The blocks with access text, and those whose attributes spell a transform, in one scan.
    accesses: set[int] = set()
    spelled: set[int] = set()
    cut.matching_families(
        _DOTTED_FAMILIES,
        {"access": (1, None, accesses), "consumer": (1, consumer, accesses), "transform": (0, _spells(text, bindings), spelled)},
    )
    # A consumer called by a bare name: `memoryview(x)`, `asarray(x)` after
    # `from numpy import asarray`, `to_np(x)` after `to_np = np.asarray`.
    bare = [n for n, target in bindings.items() if target in CONSUMERS]
    bare += [n for n in _BUILTIN_CONSUMERS if n not in bindings]
    for name in bare:
        accesses |= cut.naming(name)
    if not accesses:
        return accesses, set()  # whatever is traced, nothing to find
    return accesses, _transform_blocks(text, cut, bindings, spellings, spelled)


def _spells(text: str, bindings):
    """accept(match) for a transform's name after a dot (``_DOTTED_FAMILIES``' "transform"):
    whether the dotted name there spells a transform (`jax.jit`, `lax.scan`; not `jax.tree.map`)."""

    def spells(match: re.Match) -> bool:
        head, rest = dotted_before(text, match.start())
        if head is None:
            return True  # cannot tell: count it
        target = bindings.get(head)
        return isinstance(target, str) and public(".".join([target, *rest, match.group("transform")])) in TRANSFORMS

    return spells


def _transform_blocks(text: str, cut: Cut, bindings, spellings: Spellings, spelled: set[int]) -> set[int]:
    """The blocks that may spell a transform: a dotted name ending in a transform's name whose
    head the imports bind (`jax.jit`, `lax.scan`, `eqx.filter_jit`; one the text does not show
    plainly counts too), a bare name bound to one (`from jax import jit as J`, `J = jax.jit`,
    `J = partial(jax.jit, ...)`), or a decorator factory's name. `partial` alone traces
    nothing: `partial(jax.jit, ...)` spells `jax.jit` too. ``spelled``: the first kind's
    blocks (``_relevant_blocks`` finds them in its one scan of ``_DOTTED_FAMILIES``)."""
    live = set(spelled)
    # (`public` keeps the last part of a name: a cheap test first.)
    names = {
        n
        for n, target in bindings.items()
        if isinstance(target, str) and target.rpartition(".")[2] in TRANSFORM_LEAVES and public(target) in TRANSFORMS
    }
    names |= set(spellings.aliases)
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


def _may_alias(qualified: str) -> bool:
    """``Parts.keeps_call``: `J = partial(jax.jit, ...)`, `J = jax.jit(**options)` and
    `ffi = cffi.FFI()` are aliases and FFI objects, which ``Spellings`` and ``_ffi_names`` read."""
    return public(qualified) in (*TRANSFORMS, PARTIAL, CFFI_FFI)


def _cuts_class(text: str, begin: int, finish: int) -> bool:
    """``Parts.cuts_class``: a class with no member or consumer name after a dot stays one
    block (most hold no access, and cutting one costs more than stubbing it)."""
    return _POSSIBLE_EITHER.search(text, begin, finish) is not None


# (What ``_Receivers`` reads of the text, from the mechanism.)
_Cut, _word_positions = Cut, word_positions


# Finding the traced functions ---------------------------------------------------------


def _target_version(options: dict):
    """The JAX releases the run targets (a jax_versions.Range), when the version plumbing (analysis.jax_versions) is there."""
    try:
        from jax_codemod.analysis import jax_versions
    except ImportError:
        return None
    return jax_versions.target(options)


def _word_lines(text: str, words, *, attribute=False, call=False, not_after: str = "") -> set[int]:
    """Lines where one of ``words`` occurs as a whole word; ``attribute``: after a `.`,
    ``call``: before a `(` (whitespace allowed around both); ``not_after``: not right after
    that text (`jnp.array(` is no consumer). str.find is several times faster than one
    regex alternation over the same words."""
    positions = []
    size = len(text)
    for word in words:
        length = len(word)
        start = text.find(word)
        while start != -1:
            end = start + length
            if (start == 0 or not _is_word_char(text[start - 1])) and (end == size or not _is_word_char(text[end])):
                before = start - 1
                while before >= 0 and text[before] in " \t":
                    before -= 1
                after = end
                while after < size and text[after] in " \t":
                    after += 1
                if (
                    (not attribute or (before >= 0 and text[before] == "."))
                    and (not call or (after < size and text[after] == "("))
                    and not (not_after and text.endswith(not_after, 0, before if attribute else start))
                ):
                    positions.append(start)
            start = text.find(word, end)
    positions.sort()
    return _lines_of(text, positions)


def _lines_of(text: str, positions: list[int]) -> set[int]:
    """The lines of sorted character ``positions``."""
    lines, line, previous = set(), 1, 0
    for position in positions:
        line += count_line_breaks(text, previous, position)
        previous = position
        lines.add(line)
    return lines


def _is_word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def _matching_lines(text: str, pattern: re.Pattern[str], end: bool = False) -> set[int]:
    lines, line, previous = set(), 1, 0
    for match in pattern.finditer(text):
        position = match.end() if end else match.start()
        line += count_line_breaks(text, previous, position)
        previous = position
        lines.add(line)
    return lines


def _decorated_def_lines(text: str) -> set[int]:
    """``_matching_lines(text, _DECORATED_DEF, end=True)``: the `def` lines of decorated
    functions. That regex starts at a line whose first other character than a space or tab
    is `@`: it is tried there only (an `@` is rare in code), not at every line start."""
    lines, line, previous = set(), 1, 0
    done = -1  # where the last match ended, or the last line start tried
    at = text.find("@")
    while at != -1:
        start = text.rfind("\n", 0, at) + 1
        if start > done and not text[start:at].strip(" \t"):
            match = _DECORATED_DEF.match(text, start)
            done = start
            if match is not None:
                position = match.end()
                line += count_line_breaks(text, previous, position)
                previous = position
                lines.add(line)
                done = position
        at = text.find("@", max(at + 1, done))
    return lines


# The tracing answer (analysis/tracing.py), under the names the partial reader and its tests use.
_Region = Region


def _traced_functions(ctx: FileContext, region: Region, spellings: Spellings) -> list[Traced]:
    return tracing_for(ctx).traced_functions(region, spellings, _REPORTED)


def _scope_nodes(scope: ast.AST) -> list[ast.AST]:
    return own_nodes(scope)


# Finding the accesses -------------------------------------------------------------


def _accesses(
    ctx: FileContext, traced: Traced, members: dict[str, Member], buffers: frozenset[str], exact: bool = True
) -> list[Access]:
    function, answer = traced.node, tracing_for(ctx)
    # Only calls and attributes can be accesses (the parser makes no subclasses of them).
    nodes = [node for node in answer.scope_nodes(function) if node.__class__ is ast.Call or node.__class__ is ast.Attribute]
    called = {id(node.func) for node in nodes if node.__class__ is ast.Call}
    # A helper often guards concrete-only code (`if isinstance(x, core.Tracer): return x`):
    # only the statements before its first compound statement surely run on the tracer.
    first = first_compound_line(function) if traced.caller else None
    guarded = [(first, function.end_lineno)] if first is not None else []
    candidates = []
    for node in nodes:
        access = _as_access(ctx, node, called, members, buffers)
        if access is not None and not any(start <= node.lineno <= end for start, end in guarded):
            candidates.append((node, access))
    if not candidates:
        return []  # most traced functions: no need for their taint
    stored = answer.stored_names(function)
    params = {name for name in traced.traced if name not in stored}
    # Parameters this rule has decided about (static ones are concrete, whatever the
    # analysis of a differently spelled transform says).
    every = {a.arg for a in all_params(function)} - stored
    aliases = answer.comprehension_aliases(function, params)
    tainted = answer.tainted_names(function, traced.traced, _REPORTED)
    differentiated = traced.transforms <= DIFFERENTIATION
    eager = answer.compile_time_eval_lines(function)
    found = []
    for node, (receiver, label) in candidates:
        if differentiated and _member_of(label, members).differentiable:
            continue  # a JVP tracer's primal is concrete: the member works
        if label == ".sharding" and _under_sharding_in_types(ctx, function, node):
            continue
        root = param_root(receiver)
        if any(start <= node.lineno <= end for start, end in eager):
            # JAX computes eagerly here: only what comes from a traced argument is a tracer.
            if mentions(receiver, answer.taint(function, traced.traced, eager, _REPORTED)):
                found.append(Access(node, receiver, label, aliases.get(root, root) if root in params else None))
            continue
        if root in params or root in aliases:
            found.append(Access(node, receiver, label, aliases.get(root, root)))
        elif answer.is_traced(receiver, tainted, _REPORTED) or (
            _base_name(receiver) not in every and _is_tracer(ctx, receiver, exact)
        ):
            # The shared value analysis follows what the local taint does not: containers,
            # `self` attributes, records, helpers' return values, closures over a trace.
            found.append(Access(node, receiver, label, None))
    return sorted(found, key=lambda a: (a.node.lineno, a.node.col_offset))


_NO_MEMBER = Member("", None)


def _member_of(label: str, members: dict[str, Member]) -> Member:
    """The table's member an access label (`.item()`, `.sharding`) names; a consumer's: none."""
    if not label.startswith("."):
        return _NO_MEMBER
    return members.get(label[1:].removesuffix("()"), _NO_MEMBER)


# JAX's `sharding_in_types` flag (0.4.36 to 0.5): with it on, an abstract value carries its
# sharding, and a tracer's `.sharding` (whose property raises AttributeError) falls back to
# `Tracer.__getattr__`, which answers from the aval (jax/_src/core.py of 0.4.38).
_SHARDING_IN_TYPES = "sharding_in_types"
_CONFIG_MODULES = frozenset({"jax.config", "jax._src.config", "jax._src.config.config"})


def _under_sharding_in_types(ctx: FileContext, function, node: ast.AST) -> bool:
    """Whether ``node`` runs only in an `if config.sharding_in_types.value:` branch."""
    if _SHARDING_IN_TYPES not in ctx.text:
        return False
    for statement in tracing_for(ctx).scope_nodes(function):
        if not isinstance(statement, ast.If) or not statement.body:
            continue
        if not statement.body[0].lineno <= node.lineno <= statement.body[-1].end_lineno:
            continue
        for part in ast.walk(statement.test):
            if (
                isinstance(part, ast.Attribute)
                and part.attr == _SHARDING_IN_TYPES
                and ctx.qualname(part.value) in _CONFIG_MODULES
            ):
                return True
    return False


# Expressions whose value is a constant, a container, a mapping or a function, whatever
# their parts hold: never a tracer (`np.array([jax.devices()[0]])` reads no array).
_NEVER_TRACERS = (
    ast.Constant,
    ast.JoinedStr,
    ast.List,
    ast.Tuple,
    ast.Set,
    ast.Dict,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
    ast.Lambda,
)


def _is_tracer(ctx: FileContext, receiver: ast.AST, exact) -> bool:
    """``exact``: True, or for a partial tree False or its ``_Receivers``: the receivers it
    judges are no tracer whatever the whole-file value analysis reads; any other raises
    ``_Undecided``."""
    if isinstance(receiver, _NEVER_TRACERS):
        return False  # what the value analysis says of any of them
    if exact is True:
        return tracing_for(ctx).is_tracer(receiver)
    if exact is not False and exact.never_tracer(receiver):
        return False
    raise _Undecided


# What a partial tree shows is no tracer (analysis/partial_receivers.py), by the partial reader's name.
_Receivers = PartialReceivers


def _base_name(expr: ast.AST) -> str | None:
    while isinstance(expr, (ast.Attribute, ast.Subscript, ast.Call)):
        expr = expr.func if isinstance(expr, ast.Call) else expr.value
    return expr.id if isinstance(expr, ast.Name) else None


ALL_MEMBERS = members_for(None)
_BUILTIN_CONSUMERS = frozenset(name for name in CONSUMERS if "." not in name)


def _as_access(
    ctx: FileContext,
    node: ast.AST,
    called: set[int] = frozenset(),
    members: dict[str, Member] = ALL_MEMBERS,
    buffers: frozenset[str] = frozenset(),
) -> tuple[ast.AST, str] | None:
    """(receiver, label) when ``node`` is a concrete-only access; ``called``: ids of called
    expressions; ``buffers``: local names of cffi ``FFI`` objects."""
    if isinstance(node, ast.Call):
        func = node.func
        if any(isinstance(a, ast.Starred) for a in node.args):
            return None
        if isinstance(func, ast.Attribute):
            member = members.get(func.attr)
            if member is not None and member.positional is not None and _fits(member, node):
                return func.value, f".{func.attr}()"
            library = BUFFER_METHODS.get(func.attr)
            if node.args and (
                (library == "cffi" and isinstance(func.value, ast.Name) and func.value.id in buffers)
                or (library == "ctypes" and _under(ctx, func.value, "ctypes"))
            ):
                return node.args[-1 if library == "cffi" else 0], f"{ast.unparse(func)}()"
        if node.args and _consumer(ctx, func) is not None:
            return node.args[0], f"{ast.unparse(func)}()"
        return None
    if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and id(node) not in called:
        member = members.get(node.attr)
        if member is not None and member.positional is None:
            return node.value, f".{node.attr}"
    return None


def _access_error(ctx: FileContext, access: Access) -> str:
    """What ``access`` raises on a tracer: its member's error, or its consumer's."""
    if access.label.startswith("."):
        return _member_of(access.label, ALL_MEMBERS).error
    node = access.node
    consumer = _consumer(ctx, node.func) if isinstance(node, ast.Call) else None
    return consumer.error if consumer is not None else "TypeError"


def _fits(member: Member, call: ast.Call) -> bool:
    fewest, most = member.positional
    if len(call.args) < fewest or (most is not None and len(call.args) > most):
        return False
    return member.unless is None or not any(k.arg in (member.unless, None) for k in call.keywords)


def _consumer(ctx: FileContext, func: ast.AST) -> Consumer | None:
    if isinstance(func, ast.Name) and func.id in _BUILTIN_CONSUMERS:
        return None if ctx.is_bound(func.id) else CONSUMERS[func.id]
    qualified = ctx.qualname(func)
    return CONSUMERS.get(qualified) if qualified else None


def _under(ctx: FileContext, expr: ast.AST, module: str) -> bool:
    """Whether ``expr`` is a name from ``module`` or an array type built from one (`c_char * n`)."""
    if isinstance(expr, ast.BinOp):
        return _under(ctx, expr.left, module)
    qualified = ctx.qualname(expr) if isinstance(expr, (ast.Name, ast.Attribute)) else None
    return qualified is not None and qualified.startswith(module + ".")


def _ffi_names(ctx: FileContext) -> frozenset[str]:
    """Module-level names of cffi ``FFI`` objects: ``ffi = cffi.FFI()`` or the ``ffi`` of a
    compiled cffi module (``from ._lib import ffi``)."""
    names = set()
    for statement in ctx.tree.body:
        if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Call):
            if ctx.qualname(statement.value.func) == CFFI_FFI:
                names.update(t.id for t in statement.targets if isinstance(t, ast.Name))
        elif isinstance(statement, ast.ImportFrom):
            names.update(a.asname or a.name for a in statement.names if a.name == "ffi")
    return frozenset(names)


# What this rule reports is concrete after it: the taint does not follow it (the trace raises there).
def _reported(ctx: FileContext, call: ast.Call) -> bool:
    return _as_access(ctx, call) is not None


_REPORTED = Reported(frozenset(ALL_MEMBERS), _reported)



# Messages -------------------------------------------------------------------------


_ADVICE = {
    ".nonzero()": "pass `size=` (and `fill_value=`) so that its result has a static shape",
    ".item()": "a Python number cannot come out of a trace: keep the value an array, or make the "
    "argument static with `static_argnums`/`static_argnames`",
    ".tolist()": "a Python list cannot come out of a trace: keep the value an array, or convert the "
    "result after the jitted call returns",
}


# Why a traced function cannot be split (``Traced.obstacle``), in the messages' words.
_OBSTACLES = {
    OTHER_DECORATORS: "the function has other decorators",
    ASYNC: "the function is async",
    BY_CALL: "the function is jitted by a call and may also run eagerly",
    TRACED_TWICE: "the function is traced more than once",
    CALLED_IN_TRACE: "it is called from inside the traced `{}`",
}


def _obstacle(traced: Traced) -> str | None:
    if traced.obstacle is None:
        return None
    code, name = traced.obstacle
    return _OBSTACLES[code].format(name)


def _message(traced: Traced, access: Access, fix: FixSafety, reason: str | None) -> str:
    receiver = ast.unparse(access.receiver)
    if access.label.startswith("."):
        what = f"`{receiver}{access.label}` needs a concrete array"
    else:
        what = f"`{access.label[:-1]}{receiver})` needs a concrete array"
    where = f"inside `{traced.transform}`"
    advice = _ADVICE.get(access.label)
    if advice and fix is FixSafety.NONE:
        return f"{what}, but `{receiver}` is a tracer {where}; {advice}"
    if access.param is None:
        return (
            f"{what}, but `{receiver}` is computed {where}; call it on the concrete result after the "
            "transformed function returns, or use `jax.dlpack` / `jax.Array.__dlpack__` on that result"
        )
    head = f"{what}, but `{access.param}` is a tracer {where}"
    if param_root(access.receiver) != access.param:
        head = f"{what}, but `{receiver}` comes from `{access.param}`, a tracer {where}"
    if fix is not FixSafety.NONE:
        return f"{head}; hoist the access out of the trace: run it on the concrete argument before the jitted call"
    if access.label == ".delete()":
        return f"{head}; delete the array after the jitted call returns, or donate it with `donate_argnums`"
    if traced.transform not in JIT_LIKE:
        return (
            f"{head}; hoisting it would change what the transform computes: move it outside the "
            "transformed function and pass the concrete array in, or compute it from the result"
        )
    return (
        f"{head}; no automatic fix because {_obstacle(traced) or reason}: move the access outside the "
        "jitted function onto the concrete array (make the argument static with `static_argnums`/"
        "`static_argnames` if it must be concrete), or take it from the result after the call"
    )
