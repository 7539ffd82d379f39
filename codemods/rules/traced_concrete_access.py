"""JAX001: concrete-only array APIs called on tracers inside a traced function."""

from __future__ import annotations

import ast
import bisect
import re
import warnings
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING

from jax_codemod.analysis import api
from jax_codemod.analysis.context import (
    CONTAINER_CALLS,
    FileContext,
    block_source,
    brackets_balance,
    class_body_indent,
    class_members,
    count_line_breaks,
    in_code,
    partial_source,
    statements,
    string_interiors,
    top_level_blocks,
)
from jax_codemod.analysis.jax_versions import OLDEST_SUPPORTED
from jax_codemod.analysis.scopes import CHILD_FIELDS, child_fields
from jax_codemod.analysis.transforms import (
    JIT,
    JIT_LIKE,
    PARTIAL,
    TRANSFORM_LEAVES,
    TRANSFORMS,
    TRANSPARENT,
    Spellings,
    Transform,
    all_params,
    positional_params,
    public,
    traced_parameters,
)
from jax_codemod.rule import Finding, FixSafety, Rule

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
    # jaxlib's ArrayImpl method (jaxlib/libjax_common.so): absent from 0.11.0, there from 0.11.1
    # (both wheels run through test_member_table_matches_installed_jax).
    Member("unsafe_raw_buffer", (0, 0), UNAVAILABLE, since=(0, 11, 1)),
)


# Transforms that only differentiate: their tracers carry concrete primal values, so a member
# marked ``differentiable`` works under them (checked against the installed JAX, each of them,
# by tests/test_traced_concrete_access.py::test_differentiation_table_matches_installed_jax).
DIFFERENTIATION = frozenset(
    {
        "jax.grad",
        "jax.value_and_grad",
        "jax.jacfwd",
        "jax.jacrev",
        "jax.hessian",
        "jax.jvp",
        "jax.vjp",
        "jax.linearize",
        "equinox.filter_grad",
        "equinox.filter_value_and_grad",
        "flax.nnx.grad",
        "flax.nnx.value_and_grad",
    }
)
# A block where JAX computes eagerly inside a trace: values not computed from the traced
# arguments are concrete there.
COMPILE_TIME_EVAL = frozenset({"jax.ensure_compile_time_eval", "jax.core.ensure_compile_time_eval"})


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
# Attributes a tracer answers from its abstract value: reading them is fine in a trace.
STATIC_ATTRS = frozenset(
    {"shape", "dtype", "ndim", "size", "aval", "weak_type", "itemsize", "nbytes", "named_shape", "__class__"}
)
# Calls that keep a static value static (`n = math.prod(x.shape)`).
STATIC_BUILTINS = frozenset({"len", "int", "float", "bool", "tuple", "min", "max", "abs"})
STATIC_FUNCTIONS = frozenset({"math.prod", "numpy.prod"})
# Inside a trace, these jax functions return tracers...
ARRAY_MODULES = api.ARRAY_MODULES
# (creation functions return tracers even from no traced argument)
CREATION_FUNCTIONS = api.members(creates=True)
# ...except these, which answer from shapes and dtypes.
SHAPE_FUNCTIONS = api.members(static=True)
# Pytree maps: their function runs on the leaves of the trees. Every spelling: `public`
# maps private paths only.
TREE_MAPS = api.names(tree="map")
# Pytree helpers whose results are the leaves of their argument: tracers when it is traced.
TREE_LEAVES = frozenset(record.name for record in api.records(tree=True) if record.tree != "map")
# Attributes of a jitted function that a plain wrapper does not have.
JITTED_ATTRS = frozenset({"lower", "trace", "eval_shape", "clear_cache", "_cache_size", "__wrapped__"})
_BY_CALL = "the function is jitted by a call and may also run eagerly"
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_SCOPE_CLASSES = frozenset(_SCOPES)  # the parser makes no subclasses of them
_HOISTABLE = (ast.Expr, ast.Assign, ast.AnnAssign)
_COMPOUND = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.With, ast.AsyncWith, ast.Match)
_UNSPLITTABLE = (ast.Yield, ast.YieldFrom, ast.Await, ast.NamedExpr, ast.Global, ast.Nonlocal)


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


@dataclass
class Traced:
    """One function whose parameters are tracers, and how it came to be traced."""

    node: ast.FunctionDef | ast.Lambda
    transform: str
    traced: frozenset[str]
    donated: frozenset[str] = frozenset()
    # Why the fix cannot split it, for a jitted function; None when it can.
    unsplittable: str | None = None
    spelled: Transform | None = None  # how the file applies the transform
    # A helper called from inside a trace: only its top-level statements are checked.
    caller: str | None = None
    # Every transform that traces it (``transform`` is the one messages name).
    transforms: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.transforms.add(self.transform)


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
    READS_PARTS = True  # check(): a partial reading first, unless the tree is parsed already
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
        members = members_in(_target_version(self.options))
        # Most files are decided clean from their blocks before their access lines matter:
        # those are found only once a kept block may hold a traced access.
        if not ctx.has_tree and self._decided_clean(ctx, None, members):
            return []
        access_lines = _access_lines(ctx.text)
        if not access_lines:
            return []
        return [
            finding
            for traced, accesses, region in _analyse(ctx, access_lines, members)
            for finding in self._check_function(ctx, region, traced, accesses)
        ]

    @staticmethod
    def _decided_clean(ctx: FileContext, access_lines: set[int] | None, members) -> bool:
        """Whether the blocks that can matter (``partial_context``) show there is no finding;
        ``access_lines``: ``_access_lines(ctx.text)``, or None to compute them when needed
        (without any, ``check`` finds nothing either).

        Most files that get here have none, and parsing all of one costs more than the rest
        of the check. On any doubt (text it cannot cut, a receiver only the whole-file value
        analysis judges, a candidate access) the answer is False and the whole file is read;
        so is it if the partial reading fails in a way it should not: that costs time, never
        a finding.
        """
        try:
            cuts: list[_Cut] = []
            partial, may_access = _partial(ctx, _MOST, cuts)
            if partial is None:
                return False
            if not may_access:
                return True
            if access_lines is None:
                # A file without access lines has no finding (check() stops there, even where
                # an aliased consumer is called: `to_host(x)`)...
                if not _any_access_line(ctx.text):
                    return True
                # ...and the partial text is the file's at the kept blocks' lines, stubs (no
                # dot, no call) elsewhere: its access lines are the file's in the kept blocks,
                # the only ones an access of the partial tree can be on, found in a fraction of
                # the text.
                access_lines = _access_lines(partial.text)
            # The kept blocks' lines are the file's, so are their access lines (on a dropped
            # block's line there is at most a stub, which holds no function).
            return not _analyse(partial, access_lines, members, exact=_Receivers(ctx.text, partial.tree, cuts[0]))
        except _Undecided:
            return False
        except Exception:  # noqa: BLE001 -- see the docstring; the tests call partial_context directly
            return False

    def _check_function(
        self, ctx: FileContext, region, traced: Traced, accesses: list[Access]
    ) -> list[Finding]:
        plan, fix, reason = None, FixSafety.NONE, None
        if traced.transform in JIT_LIKE and traced.unsplittable is None:
            plan, fix, reason = _plan_split(ctx, region, traced, accesses)
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
        new_module, done = _split(module, plans)
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

    ``exact=False``: ``ctx`` is a partial context (``partial_context``); an access whose
    receiver only the whole-file value analysis can judge raises ``_Undecided``.
    """
    spellings = Spellings(ctx)
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
    region = _Region(ctx.tree, sorted(candidates | decorated))
    buffers = _ffi_names(ctx)
    found = []
    for traced in _traced_functions(ctx, region, spellings):
        accesses = _accesses(ctx, traced, members, buffers, exact)
        if accesses:
            found.append((traced, accesses, region))
    return found


# The blocks that can matter -----------------------------------------------------------

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
_POSSIBLE_ACCESS = re.compile(rf"\.{_COMMENTED_GAP}(?:{_ACCESS_AFTER_DOT})")
_POSSIBLE_CONSUMER = re.compile(rf"\.{_COMMENTED_GAP}({_CONSUMER_WORDS}){_GAP}[(#]")
# Either of the two, in one search: a class without it is not cut.
_POSSIBLE_EITHER = re.compile(
    rf"\.{_COMMENTED_GAP}(?:(?:{_METHOD_WORDS}|{_CONSUMER_WORDS}){_GAP}[(#]|(?:{_PROPERTY_WORDS})(?!\w)(?!{_GAP}\())"
)
# A run of them holds no quote, `#` or line end: all its characters are code or none is.
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
# A `def` line after the first line of a block (the first is a `def` block's own): a literal
# line break first, which the regex engine searches fast (`^` or a look-behind it tries at
# every character).
_DEF_NAME = re.compile(r"\n[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)")
_INDENTED_DEF = re.compile(r"\n([ \t]*)(?:async[ \t]+)?def[ \t]+(\w+)")
_WORDS = re.compile(r"\w+")
_NOT_WORD_TO_SPACE = str.maketrans({c: " " for c in map(chr, range(128)) if not (c.isalnum() or c == "_")})


# A partial tree that would hold more than this share of the file's text costs about what the
# whole tree costs, and files that JAX-heavy are the ones whose receivers only the whole-file
# value analysis judges (then both are parsed): such a file is read whole at once.
_MOST = 0.85


def partial_context(ctx: FileContext) -> FileContext | None:
    """A context of ``ctx``'s file with only the top-level blocks JAX001's answer depends on,
    the others replaced by stubs that bind what they bind (``context.partial_source``); None
    when the text cannot be cut with certainty or what is kept does not parse.

    A finding is an access inside a traced function. The function's block holds the access
    text (a member or consumer name after a dot or at the start of a line, or a name the
    imports bind to a consumer); it is traced by a decorator or a transform call that spells
    the transform (``_transform_blocks``: a chain that resolves to one, an imported or
    assigned alias, a decorator factory), or called from such a function, which names it.
    So the blocks kept are: every import and every statement that binds a name at module
    level the stubs do not reproduce (name resolution and aliases read them); and every block
    on a chain "spells a transform -> names a function of -> ... -> holds an access". The
    rule's analysis then finds the same traced functions in both trees, at the same lines
    and columns, and the same candidate accesses in them.
    """
    return _partial(ctx)[0]


def _partial(ctx: FileContext, most: float | None = None, cuts: list | None = None) -> tuple[FileContext | None, bool]:
    """``partial_context(ctx)``, and whether a block it keeps may hold a traced access: access
    text in a block on a chain from one that spells a transform (when there is none, the file
    has no finding, and the tree returned may be the base one). ``most``: None instead of a
    tree that keeps more than this share of the text. ``cuts``: gets the ``_Cut`` of the text."""
    text = ctx.text
    if "\r" in text or "\f" in text or "\v" in text:
        return None, False
    interiors = string_interiors(text)
    blocks = top_level_blocks(text, interiors) if interiors is not None else None
    if not blocks:
        return None, False
    blocks = _with_members(text, blocks, interiors)
    cut = _Cut(text, blocks, interiors)
    if cuts is not None:
        cuts.append(cut)
    block_of, blocks_naming = cut.block_of, cut.naming
    starts = cut.string_starts
    if not text.isascii() and any(in_code(text, at, interiors, starts) for at in _non_ascii_runs(text)):
        return None, False  # identifiers are NFKC-normalized (`x.ｉtem()` is `x.item()`): read it whole

    def semicolon(block) -> bool:
        """A second statement on the line (`T = []; J = jax.jit`) the stub would drop."""
        found = text.find(";", block.begin, block.finish)
        while found != -1:
            if in_code(text, found, interiors, starts):
                return True
            found = text.find(";", found + 1, block.finish)
        return False

    fixed = [block.kind == "other" or (block.kind in ("assign", "call", "item") and semicolon(block)) for block in blocks]
    # Imports anywhere bind names (name resolution is flow-insensitive): a block with one
    # stays, or, for a `def` or `class`, gives its imports alone, dedented, at their lines.
    # The word in a comment or string imports nothing (`# pylint: disable=g-import-not-at-top`).
    importing: dict[int, list[int]] = {}
    for position in _word_positions(text, "import"):
        index = block_of(position)
        # (A block kept already, the module-level imports' among them, changes nothing.)
        if index is not None and not fixed[index] and in_code(text, position, interiors, starts):
            importing.setdefault(index, []).append(position)
    replacements: dict[int, str] = {}
    for index, positions in importing.items():
        block = blocks[index]
        replacement = _imports_only(text, block, positions) if block.kind in ("def", "class") else None
        if replacement is None:
            fixed[index] = True
        else:
            replacements[index] = replacement
    # The module's names first: imports, aliases, module-level statements.
    verbatim = list(fixed)  # the blocks the base holds as they are
    base = _parse_partial(ctx, blocks, fixed, replacements)
    if base is None:
        return None, False
    bindings = base._bindings  # `name = f(...)` binds name to nothing, stub or not
    # ...but `J = partial(jax.jit, ...)`, `J = jax.jit(**options)` and `ffi = cffi.FFI()` are
    # aliases and FFI objects: those need their statement.
    calls = [
        i
        for i, block in enumerate(blocks)
        if block.kind == "call" and not fixed[i] and _may_be_named(block.callee, bindings)
    ]
    if calls:
        added = [i in calls for i in range(len(blocks))]
        for index in calls:
            fixed[index] = True
        base = _with_blocks(ctx, base, blocks, added, fixed, replacements)
        if base is None:
            return None, False
        bindings = base._bindings
    # A line at column 0 inside brackets (`g(\nx.item())`, `f(\njit=1)`, `a\n@ b`) reads as a
    # block of its own; a kept block cut so does not parse, but nothing parses two stubbed
    # halves, and the access in the second (or the name its stub binds) would be read wrongly.
    # The last such half closes what the statement's first block opens, and is no plain `def`
    # or `class` (those do not start inside brackets): such a block that can be stubbed (an
    # assignment, an item, a decorated statement) balances its brackets, and one the base holds
    # as it is, after another it holds so: the two parse, but the chains would read them as
    # two blocks (`if c: f = jax.jit(lambda x: g(x,` in one, its `x.item()))` in the other,
    # reached from nothing). After a stub, such a half does not parse. (A class's members were
    # checked when it was cut.)
    for index, block in enumerate(blocks):
        if block.indent and block.kind != "head":
            continue
        if block.decorated and not brackets_balance(text, block.begin, block.header, interiors, starts):
            return None, False
        if block.kind in ("def", "class", "head"):
            continue
        if (
            (not verbatim[index] and block.kind in ("assign", "call", "item"))
            or (verbatim[index] and index and verbatim[index - 1])
        ) and not brackets_balance(text, block.begin, block.finish, interiors, starts):
            return None, False
    spellings = Spellings(base)
    if any(name in bindings or name in spellings.aliases for name in CONTAINER_CALLS):
        return None, False  # `dict = ...`: the stubs' reading of `x = dict(...)` may not hold

    def consumer(match: re.Match) -> bool:
        # `np.asarray(x)` is a consumer only where `np` is bound to NumPy: `jnp.asarray(x)` is not.
        head, rest = _dotted_before(text, match.start())
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
        accesses |= blocks_naming(name)
    if not accesses:
        return base, False  # no block holds access text: whatever is traced, nothing to find
    live = _transform_blocks(text, cut, bindings, spellings, spelled)
    if not _reached(text, blocks, live, accesses, cut):
        # A function is traced only where a block on a chain from one that spells a transform
        # holds it (the same reading that drops the other blocks): access text in a block kept
        # for its module-level names but off every chain is in no traced function.
        return base, False
    defined = _module_functions(cut)
    # Forward from the blocks that spell a transform, through the functions they name (a
    # method from its own class only)...
    scope, member_of = cut.scope, cut.member_of
    reach = set(live)
    pending = list(live)
    while pending:
        source = pending.pop()
        block = blocks[source]
        for word in cut.words(source) & defined.keys():
            for target in defined[word]:
                if target not in reach and (scope[target] is None or scope[target] == member_of[source]):
                    reach.add(target)
                    pending.append(target)
    # ...and back from the accesses, through the blocks that name their functions.
    keep = [fixed[i] or (i in accesses and i in reach) for i in range(len(blocks))]
    # Blocks are only added from here: a file that needs a partial tree (keep differs from
    # fixed) past ``most`` already is read whole at once.
    if most is not None and keep != fixed and sum(b.finish - b.begin for b, k in zip(blocks, keep) if k) > most * len(text):
        return None, False
    names_done: set[tuple] = set()
    pending = [i for i in range(len(blocks)) if keep[i] and i in reach]
    while pending:
        for name, within in cut.defines(pending.pop()):
            if (name, within) in names_done:
                continue
            names_done.add((name, within))
            for other in blocks_naming(name, within=within):
                if other in reach and not keep[other]:
                    keep[other] = True
                    pending.append(other)
    # Decorator factories the kept blocks name (`@compile` with `def compile(fn): return jax.jit(fn)`).
    factories = [
        i for i in live if not keep[i] and blocks[i].kind == "def" and not blocks[i].decorated and not blocks[i].indent
    ]
    kept = list(keep)
    for index in factories:
        if any(kept[i] for i in blocks_naming(blocks[index].name, strings=True)):
            keep[index] = True
    if keep == fixed:
        return base, True
    if most is not None and sum(b.finish - b.begin for b, k in zip(blocks, keep) if k) > most * len(text):
        return None, False
    partial = _with_blocks(ctx, base, blocks, [k and not f for k, f in zip(keep, fixed)], keep, replacements)
    return partial, partial is not None


def _with_blocks(ctx: FileContext, base: FileContext, blocks, added: list[bool], keep: list[bool], replacements):
    """``_parse_partial(ctx, blocks, keep, replacements)`` from ``base``, the partial context
    of the blocks kept but not ``added``: only the added blocks are parsed, and their
    statements put in place of their stubs (each block parses on its own exactly when the
    text of the kept blocks does, their brackets balancing in both); None when they do not
    parse. A method is parsed with its class: a class with an added block is parsed whole, as
    the partial text has it, and put in place of the base's."""
    text = ctx.text
    added = list(added)
    for first, last in _class_runs(blocks):
        if any(added[first : last + 1]):
            added[first : last + 1] = [True] * (last + 1 - first)
    replacements = replacements or {}
    source = "".join(
        block_source(text, b, k, replacements.get(i)) if a else "\n" * b.line_breaks(text)
        for i, (b, a, k) in enumerate(zip(blocks, added, keep))
    )
    source = "\n" * text.count("\n", 0, blocks[0].begin) + source
    more = _parse_quietly(source, ctx.path)
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
    # The module's names are the base's: it holds every import of the file (those of the
    # stubbed `def`s and classes at their lines, which name resolution reads wherever they
    # stand), and a stub binds a `def` or `class` name to nothing as the definition does.
    # An added module-level `name = ...` block binds its name by its value, its stub to
    # nothing; the two agree for the values such blocks hold (a display, a call: an alias
    # like `J = jax.jit` is an "other" block, in the base), but that is not relied on.
    bindings = base.__dict__.get("_bindings")
    if bindings is not None and not any(
        a and not b.indent and b.kind in ("assign", "call") for b, a in zip(blocks, added)
    ):
        partial.__dict__["_bindings"] = bindings
    return partial


def _with_members(text: str, blocks, interiors: list[tuple[int, int]]):
    """``blocks`` with each module-level class that ``class_members`` can cut replaced by its
    members: a method is kept or stubbed as a top-level function is (the chains reach it
    through the names blocks mention, `self.name` among them); what else the body holds is
    kept. A test module is one class holding every test: its methods are most of the file."""
    if not any(block.kind == "class" for block in blocks):
        return blocks
    starts = [first for first, _ in interiors]
    out = []
    for block in blocks:
        # A class with no member or consumer name after a dot stays one block: most hold no
        # access, and cutting one costs more than stubbing it.
        members = (
            class_members(text, block, interiors, starts)
            if block.kind == "class"
            and _POSSIBLE_EITHER.search(text, block.begin, block.finish) is not None
            else None
        )
        if members is None:
            out.append(block)
        else:
            out.extend(members)
    return out


def _class_runs(blocks):
    """(first, last) index of each class ``_with_members`` cut into its members: its "head"
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


class _Cut:
    """Which top-level block a position of ``text`` is in."""

    def __init__(self, text: str, blocks, interiors: list[tuple[int, int]]) -> None:
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
        self.member_of: list[tuple[int, int] | None] = [None] * len(blocks)
        self.scope: list[tuple[int, int] | None] = [None] * len(blocks)
        for first, last in _class_runs(blocks):
            span = (blocks[first].begin, blocks[last].finish)
            for member in range(first, last + 1):
                self.member_of[member] = span
                if blocks[member].kind == "def":
                    self.scope[member] = span

        self._functions: dict[int, set[str]] = {}
        self._spaced: str | None = None

    def words(self, index: int) -> set[str]:
        """``set(_WORDS.findall(text, begin, finish))`` of a block: the words of its text
        (comments and strings included). An ASCII text is split at its other characters,
        translated to spaces once for all blocks (a third of the regex's cost; `\\w` of an
        ASCII character is a letter, a digit or `_`, so the words are the same)."""
        block, text = self.blocks[index], self.text
        if not text.isascii():
            return set(_WORDS.findall(text, block.begin, block.finish))
        if self._spaced is None:
            self._spaced = text.translate(_NOT_WORD_TO_SPACE)
        return set(self._spaced[block.begin : block.finish].split())

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

    def defines(self, index: int) -> list[tuple[str, tuple[int, int] | None]]:
        """(name, where a call may name it: None for anywhere) of each function a block defines
        that a call may resolve to (``functions``)."""
        within = self.scope[index]
        return [(name, within) for name in self.functions(index)]

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
        begins with a dot and matches no quote but in a comment (the ones of ``_partial``).
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

    def naming(self, word: str, strings: bool = False, within: tuple[int, int] | None = None) -> set[int]:
        """``blocks_at(_word_positions(text, word))``, reading one occurrence per block:
        common words (`bytes`, `jit`, a helper's name) occur hundreds of times in a JAX-heavy
        file, in few blocks. ``strings``: count the word inside triple-quoted strings too
        (the blocks whose ``_WORDS`` hold it); ``within``: the blocks between those offsets
        only (a class's, for a method's name)."""
        text, begins, starts, interiors = self.text, self.begins, self.string_starts, self.interiors
        found: set[int] = set()
        size = len(text)
        low, high = within if within is not None else (begins[0], size)
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
        return found


def _non_ascii_runs(text: str):
    """Where each run of non-ASCII characters (``_NON_ASCII``) starts. Only the lines that
    have one are searched: a regex over the whole text tries every character, and
    ``str.isascii`` of a line costs nothing once the line is made."""
    offset = 0
    for line in text.split("\n"):
        if not line.isascii():
            for match in _NON_ASCII.finditer(line):
                yield offset + match.start()
        offset += len(line) + 1


def _imports_only(text: str, block, positions: list[int]) -> str | None:
    """A `def` or `class` block's stub with its import statements, dedented, on their own
    lines (the rest blank); None unless each is a plain `import`/`from` statement of its
    own, after the block's first line and not naming `ffi` (``_ffi_names`` reads top-level
    imports only). A comment may end its first line (no import statement holds a quote, so
    a `#` in a line without one starts a comment)."""
    chunk = text[block.begin : block.finish]
    lines = chunk.split("\n")
    out = [""] * len(lines)
    indent = block.indent
    out[0] = f"{indent}{block.name} = None" if indent else f"class {block.name}: pass"
    for position in positions:
        number = text.count("\n", block.begin, position)
        line = lines[number]
        statement = line.lstrip()
        if number == 0 or not statement.startswith(("import ", "from ")) or "ffi" in statement:
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
            if "ffi" in lines[follow] or "#" in lines[follow] or ";" in lines[follow]:
                return None
            out[follow] = lines[follow]
    return "\n".join(out)


def _may_be_named(callee: str, bindings) -> bool:
    """Whether calling ``callee`` at module level may make an alias of a transform or an FFI."""
    head, *rest = callee.split(".")
    target = bindings.get(head)
    if not isinstance(target, str):
        return False  # resolves to nothing: `Spellings` and `_ffi_names` see nothing either
    return public(".".join([target, *rest])) in (*TRANSFORMS, PARTIAL, CFFI_FFI)


def _parse_partial(ctx: FileContext, blocks, keep: list[bool], replacements=None) -> FileContext | None:
    source = partial_source(ctx.text, blocks, keep, replacements)
    tree = _parse_quietly(source, ctx.path)
    return None if tree is None else FileContext(ctx.path, source, tree)


def _parse_quietly(source: str, path: str) -> ast.Module | None:
    """The tree of a partial text, or None where it does not parse (the caller reads the file
    whole then, and the whole-file parse reports what is wrong); no warnings (the whole-file
    parse gives those once)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(source, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _module_functions(cut: _Cut) -> dict[str, list[int]]:
    """Function name -> the blocks that define it (``_Cut.functions``: `def` blocks, methods,
    functions under a module-level `if` or `try`)."""
    defined: dict[str, list[int]] = {}
    for index in range(len(cut.blocks)):
        for name in cut.functions(index):
            defined.setdefault(name, []).append(index)
    return defined


def _reached(text: str, blocks, live: set[int], accesses: set[int], cut: _Cut) -> bool:
    """Whether a block of ``accesses`` is on a chain from a block of ``live``: the forward
    reading of ``_partial`` (a block reaches the blocks that define a function named anywhere
    in its text; a method, the blocks of its class only), walked backwards from the access
    blocks. Most files have many blocks that spell a transform and few that hold access text,
    so walking back from those reads little of the text; a chain found either way is the same
    chain."""
    if not live.isdisjoint(accesses):
        return True
    # A class none of whose blocks spells a transform or defines a function a call outside
    # it may name (one under an `if`, a nested class's) is entered by no chain: its methods
    # are named from its own blocks only. Its blocks are not walked (a JAX-heavy class holds
    # access text in many methods that call each other, none of them traced).
    member_of = cut.member_of
    entered = {member_of[i] for i in live} | {
        member_of[i]
        for i, block in enumerate(blocks)
        if block.kind in ("other", "class") and member_of[i] is not None and cut.functions(i)
    }
    seen = set(accesses)
    pending = [i for i in accesses if member_of[i] is None or member_of[i] in entered]
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
                if other in live:
                    return True
                if other not in seen:
                    seen.add(other)
                    pending.append(other)
    return False


_TRANSFORM_WORDS = "|".join(sorted(TRANSFORM_LEAVES - {"partial"}))
_TRANSFORM_ATTRIBUTE = re.compile(rf"\.{_COMMENTED_GAP}({_TRANSFORM_WORDS})(?!\w)")
# _POSSIBLE_ACCESS, _POSSIBLE_CONSUMER and _TRANSFORM_ATTRIBUTE as one pattern, for
# ``_Cut.matching_families``: every dot starts the three searches' attempts, so one search
# costs what each did. Their names differ and each ends at a character no name holds, so at
# most one of them matches after a dot, with the span its own pattern gives.
_DOTTED_FAMILIES = re.compile(
    rf"\.{_COMMENTED_GAP}(?:(?P<access>{_ACCESS_AFTER_DOT})"
    rf"|(?P<consumer>{_CONSUMER_WORDS}){_GAP}[(#]|(?P<transform>{_TRANSFORM_WORDS})(?!\w))"
)


def _dotted_before(text: str, dot: int) -> tuple[str | None, list[str]]:
    """(head, the names after it) of the dotted name right before ``dot``: `jax.lax` in
    `jax.lax.scan` -> ("jax", ["lax"]); head None when the text does not show a plain one
    (`f().jit`, `jax .lax.scan`, `x[0].item`)."""
    start = dot
    while start > 0 and (_is_word_char(text[start - 1]) or text[start - 1] == "."):
        start -= 1
    before = start - 1
    while before >= 0 and text[before] in " \t\n\\":
        before -= 1
    parts = text[start:dot].split(".")
    if (before >= 0 and text[before] in ".)]}") or not all(parts) or parts[0][0].isdigit():
        return None, []
    return parts[0], parts[1:]


def _spells(text: str, bindings):
    """accept(match) for a transform's name after a dot (``_DOTTED_FAMILIES``' "transform"):
    whether the dotted name there spells a transform (`jax.jit`, `lax.scan`; not `jax.tree.map`)."""

    def spells(match: re.Match) -> bool:
        head, rest = _dotted_before(text, match.start())
        if head is None:
            return True  # cannot tell: count it
        target = bindings.get(head)
        return isinstance(target, str) and public(".".join([target, *rest, match.group("transform")])) in TRANSFORMS

    return spells


def _transform_blocks(text: str, cut: _Cut, bindings, spellings: Spellings, spelled: set[int]) -> set[int]:
    """The blocks that may spell a transform: a dotted name ending in a transform's name whose
    head the imports bind (`jax.jit`, `lax.scan`, `eqx.filter_jit`; one the text does not show
    plainly counts too), a bare name bound to one (`from jax import jit as J`, `J = jax.jit`,
    `J = partial(jax.jit, ...)`), or a decorator factory's name. `partial` alone traces
    nothing: `partial(jax.jit, ...)` spells `jax.jit` too. ``spelled``: the first kind's
    blocks (``_partial`` finds them in its one scan of ``_DOTTED_FAMILIES``)."""
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


def _word_positions(text: str, word: str):
    size, length = len(text), len(word)
    start = text.find(word)
    while start != -1:
        end = start + length
        if (start == 0 or not _is_word_char(text[start - 1])) and (end == size or not _is_word_char(text[end])):
            yield start
        start = text.find(word, end)


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


# Nodes with nothing below them that no reader of a region asks about (its readers look
# for functions and calls, and for the parents of those): kept out of it.
_LEAVES = frozenset({ast.Name, ast.Constant})


class _Region:
    """The nodes whose line range covers a candidate line, with their parents (names and
    constants left out)."""

    def __init__(self, tree: ast.Module, lines: list[int]) -> None:
        self.parents: dict[ast.AST, ast.AST] = {}
        self.nodes: list[ast.AST] = []
        self._scopes: dict[ast.AST, ast.AST | None] = {}
        parents, nodes = self.parents, self.nodes
        bisect_left, count = bisect.bisect_left, len(lines)
        leaves, node_class = _LEAVES, ast.AST
        stack: list[ast.AST] = [tree]
        found: list[ast.AST] = []
        while stack:
            node = stack.pop()
            nodes.append(node)
            # scopes.children, inlined (this loop runs for every node of the region):
            # contexts and operators (shared, never interesting) are no children here;
            # `pass`, `break` and `continue` are (no reader of the region looks for them).
            fields = CHILD_FIELDS.get(node.__class__)
            for name in child_fields(node.__class__) if fields is None else fields:
                value = getattr(node, name, None)
                if value.__class__ is list:
                    found.extend([item for item in value if isinstance(item, node_class)])
                elif isinstance(value, node_class):
                    found.append(value)
            for child in found:
                if child.__class__ in leaves:
                    continue
                start = getattr(child, "lineno", None)
                if start is not None:
                    # _covers, inlined: a candidate line within the child's lines.
                    index = bisect_left(lines, start)
                    if index == count or lines[index] > child.end_lineno:
                        continue
                parents[child] = node
                stack.append(child)
            found.clear()

    def scope_of(self, node: ast.AST) -> ast.AST | None:
        """The function (or None: the module) whose body holds ``node``."""
        # Asked again and again for the same definitions (`_functions_passed` resolves each
        # call's name against every function of that name): the parents never change.
        scopes = self._scopes
        if node in scopes:
            return scopes[node]
        current = self.parents.get(node)
        while current is not None and not isinstance(
            current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
        ):
            current = self.parents.get(current)
        scopes[node] = current
        return current


def _covers(lines: list[int], start: int, end: int) -> bool:
    index = bisect.bisect_left(lines, start)
    return index < len(lines) and lines[index] <= end


def _traced_functions(ctx: FileContext, region: _Region, spellings: Spellings) -> list[Traced]:
    found: dict[ast.AST, Traced] = {}
    index: dict[str, list[ast.FunctionDef]] | None = None
    for node in region.nodes:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            applied = [t for t in map(spellings.transform_of, node.decorator_list) if t is not None]
            if not applied:
                continue
            others = len(node.decorator_list) - len(applied)
            others -= sum(map(spellings.is_transparent, node.decorator_list))
            why = None
            if others:
                why = "the function has other decorators"
            elif isinstance(node, ast.AsyncFunctionDef):
                why = "the function is async"
            for transform in applied:
                _add(found, node, transform, unsplittable=why)
        elif isinstance(node, ast.Call):
            hit = spellings.applied(node)
            if hit is None:
                continue
            if index is None:
                index = _function_index(region)
            transform, positions = hit
            for position in positions:
                if position < len(node.args):
                    argument, fixed = _partial_binding(ctx, node.args[position])
                    # `jax.jit(jax.vmap(f, in_axes=(None, 0)))`: the outer transform traces
                    # every argument the inner one passes through, unmapped ones too.
                    inner = _transformed_within(spellings, argument)
                    if inner is not None:
                        argument, fixed = _partial_binding(ctx, inner)
                    for function, bound in _functions_passed(region, index, spellings, node, argument):
                        # `jax.jit(partial(loss, model=model))`: bound arguments are constants.
                        constants = _bound_names(function, fixed, bound) if fixed else frozenset()
                        _add(found, function, transform, unsplittable=_BY_CALL, bound=bound, constants=constants)
    _add_helpers(ctx, region, _leading_index(ctx, region, _function_index(region, decorated=True)), spellings, found)
    return [traced for traced in found.values() if traced.traced]


def _leading_index(ctx: FileContext, region: _Region, index: dict) -> dict:
    """``index`` and, asked for by name, the module-level functions outside the region that
    call one of its functions, a few levels deep (`def _mid(x, s): _leaf(s)`, where only
    `_leaf` holds an access): a traced function calling `_mid` runs `_leaf` in its trace too."""
    return _LeadingIndex(index, ctx, region) if index else index


class _LeadingIndex(dict):
    """Only the names traced code calls are looked up, so only those functions are walked."""

    def __init__(self, index: dict, ctx: FileContext, region: _Region) -> None:
        super().__init__(index)
        self._ctx, self._region = ctx, region
        self._outside: dict[str, list[ast.FunctionDef]] | None = None
        self._decided: dict[str, list[ast.FunctionDef] | None] = {}

    def get(self, name, default=None):
        found = super().get(name)
        if found is not None:
            return found
        led = self._leading(name, 0)
        return default if led is None else led

    def _leading(self, name: str, depth: int) -> list[ast.FunctionDef] | None:
        if name in self._decided:
            return self._decided[name]
        if self._outside is None:
            parents, own = self._region.parents, dict.keys(self)
            self._outside = {}
            for node in self._ctx.tree.body:
                if node.__class__ is ast.FunctionDef and node.name not in own and node not in parents:
                    self._outside.setdefault(node.name, []).append(node)
        functions = self._outside.get(name)
        self._decided[name] = None  # a recursive chain leads nowhere new
        if functions and depth < 2 and any(
            node.__class__ is ast.Call
            and node.func.__class__ is ast.Name
            and (dict.__contains__(self, node.func.id) or self._leading(node.func.id, depth + 1) is not None)
            for function in functions
            for node in _scope_nodes(function)
        ):
            self._decided[name] = functions
        return self._decided[name]


def _first_compound_line(function) -> int | None:
    """The line of ``function``'s first compound statement (`if`, `for`, `try`, ...), if any."""
    body = function.body if isinstance(function.body, list) else []
    return next((s.lineno for s in body if isinstance(s, _COMPOUND)), None)


def _transformed_within(spellings: Spellings, argument: ast.AST, depth: int = 0) -> ast.AST | None:
    """The function a transform call given as ``argument`` transforms (innermost first)."""
    argument = spellings.unwrap(argument)
    if depth > 3 or not isinstance(argument, ast.Call):
        return None
    hit = spellings.applied(argument)
    if hit is None:
        return None
    _, positions = hit
    if not positions or positions[0] >= len(argument.args):
        return None
    function = argument.args[positions[0]]
    return _transformed_within(spellings, function, depth + 1) or function


def _add_helpers(ctx: FileContext, region: _Region, index, spellings: Spellings, found: dict) -> None:
    """Functions of this file called from inside a trace with tracer arguments
    (`scaled(x)`, `jax.named_call(scaled, name="s")(x)`, `jax.tree.map(record, params)`) run
    in the trace too. Host callbacks (`jax.pure_callback(host, ...)`) are not calls of
    their function: it runs on concrete arrays."""
    pending = list(found.values())
    for _ in range(3):  # helpers of helpers, a few levels deep
        added = []
        for traced in pending:
            tainted = None  # computed for the first call of a function of this file
            # As for accesses (`_accesses`): in a helper, only what comes before its first
            # compound statement surely runs on the tracer (`if validate is True:` is never
            # true of a traced flag).
            after = _first_compound_line(traced.node) if traced.caller else None
            for node in _scope_nodes(traced.node):
                if not isinstance(node, ast.Call) or (after is not None and node.lineno >= after):
                    continue
                callee, arguments = node.func, list(node.args)
                if node.args and public(ctx.qualname(callee)) in TREE_MAPS:
                    callee, arguments = node.args[0], node.args[1:]  # a leaf of a traced tree is traced
                for function, _ in _functions_passed(region, index, spellings, node, callee, traced.node):
                    if tainted is None:
                        tainted = _tainted_names(ctx, traced.node, traced.traced)
                    params = _called_params(ctx, function, arguments, node.keywords, tainted)
                    if params and function in found:
                        # A jitted function called inside another trace: its wrapper would
                        # run in that trace too, so splitting it fixes nothing.
                        known = found[function]
                        known.transforms |= traced.transforms
                        known.unsplittable = known.unsplittable or (
                            f"it is called from inside the traced `{_name_of(traced.node)}`"
                        )
                    elif params:
                        helper = Traced(
                            function,
                            traced.transform,
                            params,
                            unsplittable=f"it is called from inside the traced `{_name_of(traced.node)}`",
                            caller=_name_of(traced.node),
                            transforms=set(traced.transforms),
                        )
                        found[function] = helper
                        added.append(helper)
        if not added:
            return
        pending = added


def _called_params(ctx: FileContext, function, arguments, keywords, tainted: set[str]) -> frozenset[str]:
    """The parameters of ``function`` that a call passes a tracer to."""
    positional = positional_params(function)
    traced = set()
    for name, argument in zip(positional, arguments):
        if isinstance(argument, ast.Starred):
            break
        if _is_traced(ctx, argument, tainted):
            traced.add(name)
    names = {a.arg for a in all_params(function)}
    for keyword in keywords:
        if keyword.arg in names and _is_traced(ctx, keyword.value, tainted):
            traced.add(keyword.arg)
    return frozenset(traced)


def _name_of(function) -> str:
    return getattr(function, "name", "<lambda>")


def _partial_binding(ctx: FileContext, argument: ast.AST) -> tuple[ast.AST, ast.Call | None]:
    """`functools.partial(f, a, k=v)` -> (f, the partial call); anything else -> (it, None)."""
    if (
        isinstance(argument, ast.Call)
        and argument.args
        and public(ctx.qualname(argument.func)) == PARTIAL
        and not any(isinstance(a, ast.Starred) for a in argument.args)
    ):
        return argument.args[0], argument
    return argument, None


def _bound_names(function, partial_call: ast.Call, bound: bool) -> set[str]:
    positional = positional_params(function)[1 if bound else 0 :]
    names = set(positional[: len(partial_call.args) - 1])
    return names | {k.arg for k in partial_call.keywords if k.arg is not None}


def _function_index(region: _Region, decorated: bool = False) -> dict[str, list[ast.FunctionDef]]:
    """Functions of the region by name, undecorated ones unless ``decorated`` (methods are
    found through their class)."""
    # Both indexes in one pass over the region, once: the traced-function search asks for
    # the first, the helper search for the second.
    indexes = region.__dict__.get("_indexes")
    if indexes is None:
        plain: dict[str, list[ast.FunctionDef]] = {}
        every: dict[str, list[ast.FunctionDef]] = {}
        parents = region.parents
        for node in region.nodes:
            if node.__class__ is ast.FunctionDef and not isinstance(parents.get(node), ast.ClassDef):
                every.setdefault(node.name, []).append(node)
                if not node.decorator_list:
                    plain.setdefault(node.name, []).append(node)
        indexes = region._indexes = (plain, every)
    return indexes[1] if decorated else indexes[0]


def _functions_passed(region: _Region, index, spellings: Spellings, call: ast.Call, argument: ast.AST, scope=None):
    """(function, bound) for each function ``argument`` may be; ``bound``: a method reached
    through `self`, whose first parameter is not an argument of the transformed function."""
    argument = spellings.unwrap(argument)
    if isinstance(argument, ast.Lambda):
        return [(argument, False)]
    if isinstance(argument, (ast.List, ast.Tuple)):  # lax.switch branches
        return [f for e in argument.elts for f in _functions_passed(region, index, spellings, call, e, scope)]
    if isinstance(argument, ast.Attribute):
        return [(method, True) for method in _self_methods(region, call, argument)]
    if not isinstance(argument, ast.Name):
        return []
    elements = _comprehension_elements(region, call, argument.id)
    if elements is not None:
        return [f for e in elements for f in _functions_passed(region, index, spellings, call, e, scope)]
    # Only functions holding an access matter, and those are in the region. The name
    # resolves like a closure: the call's own scope first, then the enclosing ones.
    definitions = index.get(argument.id, [])
    scope = scope or region.scope_of(call)
    while definitions:
        here = [node for node in definitions if region.scope_of(node) is scope]
        if here or scope is None or argument.id in _stored_names(scope):
            return [(node, False) for node in here]
        scope = region.scope_of(scope)
    return []


def _self_methods(region: _Region, call: ast.Call, argument: ast.Attribute) -> list[ast.FunctionDef]:
    """`jax.jit(self._step)` inside a method: the class's own `_step`."""
    method = region.scope_of(call)
    if not isinstance(method, ast.FunctionDef) or not isinstance(argument.value, ast.Name):
        return []
    positional = positional_params(method)
    owner = region.parents.get(method)
    if not positional or argument.value.id != positional[0] or not isinstance(owner, ast.ClassDef):
        return []
    return [
        node
        for node in owner.body
        if isinstance(node, ast.FunctionDef) and node.name == argument.attr and not node.decorator_list
    ]


def _comprehension_elements(region: _Region, call: ast.Call, name: str) -> list[ast.AST] | None:
    """`[jax.jit(f) for f in (a, b)]`, `{k: jax.jit(f) for k, f in {"a": a}.items()}`: what the
    comprehension variable ``name`` runs over, when that is written out; None when ``name`` is
    not a comprehension variable around ``call``."""
    node = region.parents.get(call)
    while node is not None and not isinstance(node, (ast.stmt, ast.Lambda)):
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            for generator in node.generators:
                target, iterable = generator.target, generator.iter
                if isinstance(target, ast.Name) and target.id == name:
                    if isinstance(iterable, (ast.List, ast.Tuple, ast.Set)):
                        return list(iterable.elts)
                    if isinstance(iterable, ast.Dict) or _dict_view(iterable, "values"):
                        return list((iterable if isinstance(iterable, ast.Dict) else iterable.func.value).values)
                    return []
                if (
                    isinstance(target, ast.Tuple)
                    and len(target.elts) == 2
                    and isinstance(target.elts[1], ast.Name)
                    and target.elts[1].id == name
                ):
                    return list(iterable.func.value.values) if _dict_view(iterable, "items") else []
        node = region.parents.get(node)
    return None


def _dict_view(expr: ast.AST, method: str) -> bool:
    return (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Attribute)
        and expr.func.attr == method
        and isinstance(expr.func.value, ast.Dict)
        and not expr.args
    )


def _add(found: dict, function, transform: Transform, unsplittable, bound: bool = False, constants=frozenset()):
    parameters = traced_parameters(function, transform, bound)
    if parameters is None:
        return  # options we cannot read: which arguments are static is unknown
    traced_names, donated_names = parameters
    traced_names = traced_names - constants
    previous = found.get(function)
    if previous is not None:
        previous.unsplittable = previous.unsplittable or "the function is traced more than once"
        previous.traced = previous.traced | traced_names
        previous.transforms.add(transform.name)
        if previous.transform in JIT_LIKE:
            previous.transform = transform.name
        return
    found[function] = Traced(function, transform.name, traced_names, donated_names, unsplittable, transform)


# Finding the accesses -------------------------------------------------------------


def _scope_nodes(scope: ast.AST) -> list[ast.AST]:
    """Nodes of ``scope``'s own body, not of the functions or classes nested in it.

    Walked once per function and kept on the node: the traced-function search, the helper
    search, the taint and the access scan all read the same function's nodes (four walks
    of each traced function made them most of JAX001's cost on JAX-heavy code).
    """
    nodes = scope.__dict__.get("_jax001_nodes")
    if nodes is None:
        nodes = []
        stack = list(scope.body) if isinstance(scope.body, list) else [scope.body]
        # Without contexts and operators: every reader looks for other nodes.
        while stack:
            node = stack.pop()
            nodes.append(node)
            if node.__class__ in _SCOPE_CLASSES:
                continue
            # scopes.children, inlined.
            fields = CHILD_FIELDS.get(node.__class__)
            for name in child_fields(node.__class__) if fields is None else fields:
                value = getattr(node, name, None)
                if value.__class__ is list:
                    stack.extend([item for item in value if isinstance(item, ast.AST)])
                elif isinstance(value, ast.AST):
                    stack.append(value)
        scope._jax001_nodes = nodes
    return nodes


def _stored_names(function) -> set[str]:
    stored = function.__dict__.get("_jax001_stored")
    if stored is None:
        stored = function._jax001_stored = {
            node.id
            for node in _scope_nodes(function)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
        }
    return stored


def _accesses(
    ctx: FileContext, traced: Traced, members: dict[str, Member], buffers: frozenset[str], exact: bool = True
) -> list[Access]:
    function = traced.node
    # Only calls and attributes can be accesses (the parser makes no subclasses of them).
    nodes = [node for node in _scope_nodes(function) if node.__class__ is ast.Call or node.__class__ is ast.Attribute]
    called = {id(node.func) for node in nodes if node.__class__ is ast.Call}
    # A helper often guards concrete-only code (`if isinstance(x, core.Tracer): return x`):
    # only the statements before its first compound statement surely run on the tracer.
    first = _first_compound_line(function) if traced.caller else None
    guarded = [(first, function.end_lineno)] if first is not None else []
    candidates = []
    for node in nodes:
        access = _as_access(ctx, node, called, members, buffers)
        if access is not None and not any(start <= node.lineno <= end for start, end in guarded):
            candidates.append((node, access))
    if not candidates:
        return []  # most traced functions: no need for their taint
    stored = _stored_names(function)
    params = {name for name in traced.traced if name not in stored}
    # Parameters this rule has decided about (static ones are concrete, whatever the
    # analysis of a differently spelled transform says).
    every = {a.arg for a in all_params(function)} - stored
    aliases = _comprehension_aliases(ctx, function, params)
    tainted = _tainted_names(ctx, function, traced.traced)
    differentiated = traced.transforms <= DIFFERENTIATION
    eager = _compile_time_eval_lines(ctx, function)
    found = []
    for node, (receiver, label) in candidates:
        if differentiated and _member_of(label, members).differentiable:
            continue  # a JVP tracer's primal is concrete: the member works
        if label == ".sharding" and _under_sharding_in_types(ctx, function, node):
            continue
        root = _param_root(receiver)
        if any(start <= node.lineno <= end for start, end in eager):
            # JAX computes eagerly here: only what comes from a traced argument is a tracer.
            if _mentions(receiver, _taint(ctx, function, traced.traced, eager)):
                found.append(Access(node, receiver, label, aliases.get(root, root) if root in params else None))
            continue
        if root in params or root in aliases:
            found.append(Access(node, receiver, label, aliases.get(root, root)))
        elif _is_traced(ctx, receiver, tainted) or (
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
    for statement in _scope_nodes(function):
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


def _compile_time_eval_lines(ctx: FileContext, function) -> list[tuple[int, int]]:
    """The lines of ``function``'s `with jax.ensure_compile_time_eval():` blocks, where what
    is not computed from a traced argument is a concrete array."""
    if "compile_time_eval" not in ctx.text:
        return []
    return [
        (node.body[0].lineno, node.body[-1].end_lineno)
        for node in _scope_nodes(function)
        if isinstance(node, (ast.With, ast.AsyncWith))
        and any(
            isinstance(item.context_expr, ast.Call) and public(ctx.qualname(item.context_expr.func)) in COMPILE_TIME_EVAL
            for item in node.items
        )
    ]


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
        return ctx.analysis.is_tracer(receiver)
    if exact is not False and exact.never_tracer(receiver):
        return False
    raise _Undecided


# `jax.typeof(x)`: an abstract value, never an array; the value analysis has it as a library
# call that returns an unknown value. The names a module may be imported as for it to be that.
_TYPEOF_MODULES = frozenset({"jax", "jax.core", "jax._src.core"})


class _Receivers:
    """Receivers the whole-file value analysis never calls tracers, judged from the file's text
    and a partial tree of it (``_partial``: every import statement of the file at its line)
    without that analysis.

    - A name every binding of which, anywhere in the file, is an import (`jax` in
      `jax.devices()`): the analysis gives a name the join of what its bindings, parameters
      and the module's names hold, and an import holds a module, a library object, a transform
      or nothing known; narrowing by `isinstance` gives annotation values, never tracers.
    - `B.typeof(...)` where every binding of `B` imports `jax`, `jax.core` or `jax._src.core`.
    - An operator over constants only (`1.0 + 0j`): a constant.
    - `E.aval` (or another of ``STATIC_ATTRS``) where no class of the file can bind that
      attribute (``_unbound_attribute``): the analysis gives an attribute of an array, a
      module or an unknown value no tracer; only a class's fields and attributes may be one.

    Every binding of a name spells it in the code (the text is ASCII or its identifiers are
    spelled as parsed) or inside an f-string's replacement field: an occurrence that is not
    right after a dot, right before one or after `from` must stand on an import line, one per
    name that line's imports bind; one in a string or comment must have no `{` before it in
    its string (no `{` or `}` before it on its line: a line that starts inside a replacement
    field, which Python 3.12 allows, closes it first). Anything else: not judged.
    """

    def __init__(self, text: str, tree: ast.Module, cut: _Cut | None = None) -> None:
        self.text, self.tree, self.cut = text, tree, cut
        self._unbound: dict[str, bool] = {}
        self._classes: dict[int, list[tuple[int, int]]] = {}
        self._targets: dict[str, tuple[str | None, ...] | None] = {}
        self._imports: dict[int, list[ast.stmt]] | None = None
        self._statements: list[ast.stmt] = []
        self._interiors: list[tuple[int, int]] = []
        self._plain: bool | None = None

    def never_tracer(self, receiver: ast.AST) -> bool:
        if isinstance(receiver, ast.Name):
            return self.import_targets(receiver.id) is not None
        if isinstance(receiver, ast.Call):
            func = receiver.func
            if isinstance(func, ast.Attribute) and func.attr == "typeof" and isinstance(func.value, ast.Name):
                targets = self.import_targets(func.value.id)
                return bool(targets) and all(target in _TYPEOF_MODULES for target in targets)
            return False
        if isinstance(receiver, ast.Attribute) and receiver.attr in STATIC_ATTRS:
            if receiver.attr not in self._unbound:
                self._unbound[receiver.attr] = self._unbound_attribute(receiver.attr)
            return self._unbound[receiver.attr]
        return _constant_operation(receiver)

    def _ready(self) -> bool:
        """Whether the text's identifiers are spelled as parsed and its strings are known."""
        if self._plain is None:
            # (Imported here: most runs never judge a receiver, and the module is large.)
            from jax_codemod.analysis.values import spelled_as_parsed

            self._plain = spelled_as_parsed(self.text)
            interiors = string_interiors(self.text) if self._plain else None
            self._plain = interiors is not None
            self._interiors = interiors or []
        return self._plain

    def _in_a_field(self, position: int, starts: list[int]) -> bool:
        """Whether an occurrence in a string or comment may be in an f-string's replacement
        field: a `{` before it in its triple-quoted string, or a `{` or `}` before it on its line."""
        text, interiors = self.text, self._interiors
        inside = bisect.bisect_right(starts, position) - 1
        if inside >= 0 and position <= interiors[inside][1]:
            return text.find("{", interiors[inside][0], position) != -1
        start = text.rfind("\n", 0, position) + 1
        return text.find("{", start, position) != -1 or text.find("}", start, position) != -1

    def _unbound_attribute(self, attr: str) -> bool:
        """Whether no class of the file can have ``attr`` as a field or attribute, for the value
        analysis: it reads them from a class body's `def attr`, `attr = ...` and `attr: T`
        statements and from methods' `this.attr = ...` / `this.attr: T = ...` statements.

        Each occurrence of the word in the code must be in a module-level block (not a class)
        with no `class` in its code: no class body and no method there; or be read (`x.attr.y`,
        `x.attr(`, `x.attr[`: followed by `.`, `(` or `[`, the parser's look-ahead that makes
        no target, and not after `def` or `class`); or be a name (after a character other than
        a dot on its line, or starting a line that starts outside brackets and continues no
        other) in the body of a `def` block (a function, or a method of a class cut into its
        members), past its header line, and in no class body of that block: after a `class`
        only when starting a statement indented no deeper than every `class` before it.
        Anything else, an occurrence in a possible replacement field, or text not cut into
        blocks: False."""
        cut = self.cut
        if cut is None or not self._ready():
            return False
        text, interiors, blocks = self.text, self._interiors, cut.blocks
        starts = cut.string_starts
        size = len(text)
        for position in _word_positions(text, attr):
            if not in_code(text, position, interiors, starts):
                if self._in_a_field(position, starts):
                    return False
                continue
            after = position + len(attr)
            while after < size and text[after] in " \t":
                after += 1
            before = position - 1
            while before >= 0 and text[before] in " \t":
                before -= 1
            keyword = any(
                text.endswith(word, 0, before + 1) and (before < len(word) or not _is_word_char(text[before - len(word)]))
                for word in ("def", "class")
            )
            index = cut.block_of(position)
            if index is None:
                return False
            block = blocks[index]
            classes = self._class_lines(index)
            if not block.indent and block.kind not in ("class", "head") and not classes:
                continue  # a module-level statement with no class in it: no class body, no method
            if after < size and text[after] in ".([" and not keyword:
                continue
            if keyword or before < 0 or text[before] == "." or block.kind != "def":
                return False  # a definition of it, an attribute that may be stored, a class body
            line_start = text.rfind("\n", 0, position) + 1
            if line_start <= block.header:
                return False  # on its header's line, or among its decorators
            # A name in a function's body; at a line's start, a statement's (unless the line
            # continues another), which is in no class body its indentation does not enter.
            at_start = text[before] == "\n"
            if at_start and (
                (line_start >= 2 and text[line_start - 2] == "\\")
                or not brackets_balance(text, block.header, line_start, interiors, starts)
            ):
                return False
            earlier = [indent for at, indent in classes if at < position]
            if earlier and (
                not at_start
                or text[line_start:position].strip(" ")
                or any(indent < position - line_start for indent in earlier)
            ):
                return False
        return True

    def _class_lines(self, index: int) -> list[tuple[int, int]]:
        """(position, indentation) of each `class` in a block's code; the indentation is -1 where
        the line has more than spaces before it."""
        found = self._classes.get(index)
        if found is None:
            block, text = self.cut.blocks[index], self.text
            found = []
            position = text.find("class", block.begin, block.finish)
            while position != -1:
                end = position + 5
                if (
                    not _is_word_char(text[position - 1])
                    and (end == len(text) or not _is_word_char(text[end]))
                    and in_code(text, position, self._interiors, self.cut.string_starts)
                ):
                    line_start = text.rfind("\n", 0, position) + 1
                    found.append((position, -1 if text[line_start:position].strip(" ") else position - line_start))
                position = text.find("class", end, block.finish)
            self._classes[index] = found
        return found

    def import_targets(self, name: str) -> tuple[str | None, ...] | None:
        """What the imports that bind ``name`` import (None for a relative one), when every
        binding of ``name`` in the file is an import; None when one may not be."""
        if name not in self._targets:
            self._targets[name] = self._import_targets(name)
        return self._targets[name]

    def _import_targets(self, name: str) -> tuple[str | None, ...] | None:
        text = self.text
        if not self._ready():
            return None
        imports = self._import_lines()
        interiors = self._interiors
        starts = [first for first, _ in interiors]
        size = len(text)
        unexplained: dict[int, int] = {}
        line, counted = 1, 0
        for position in _word_positions(text, name):
            line += text.count("\n", counted, position)
            counted = position
            before = position - 1
            while before >= 0 and text[before] in " \t":
                before -= 1
            if before >= 0 and text[before] == ".":
                continue  # an attribute or a module's part, no name
            after = position + len(name)
            while after < size and text[after] in " \t":
                after += 1
            if after < size and text[after] == ".":
                continue  # a name read (`jax.numpy`), or `import jax.numpy`: a binding the imports give
            if text.endswith("from", 0, before + 1) and (before < 4 or not _is_word_char(text[before - 4])):
                continue  # `from jax import`, `yield from jax`, `raise E from jax`: nothing bound
            if not in_code(text, position, interiors, starts):
                if self._in_a_field(position, starts):
                    return None
                continue
            if line not in imports:
                return None
            unexplained[line] = unexplained.get(line, 0) + 1
        targets: list[str | None] = []
        explained: dict[int, int] = {}
        for statement in self._statements:
            for alias in statement.names:
                bound = alias.asname or alias.name.split(".", 1)[0]
                if bound != name:
                    continue
                if isinstance(statement, ast.Import):
                    targets.append(alias.name if alias.asname else bound)
                else:
                    targets.append(None if statement.level or not statement.module else f"{statement.module}.{alias.name}")
                if alias.asname or alias.name == name:  # spelled as the name itself
                    at = alias.end_lineno if alias.asname else alias.lineno
                    explained[at] = explained.get(at, 0) + 1
        if unexplained != explained:
            return None  # a line that binds the name otherwise too (`import os; jax = x`)
        return tuple(targets)

    def _import_lines(self) -> dict[int, list[ast.stmt]]:
        """Line -> the import statements of the partial tree on it (statements only are walked)."""
        if self._imports is None:
            lines: dict[int, list[ast.stmt]] = {}
            imports = [s for s in statements(self.tree.body) if isinstance(s, (ast.Import, ast.ImportFrom))]
            for statement in imports:
                for number in range(statement.lineno, statement.end_lineno + 1):
                    lines.setdefault(number, []).append(statement)
            self._imports, self._statements = lines, imports
        return self._imports


def _constant_operation(expr: ast.AST) -> bool:
    """An operator over constants only: the value analysis gives it a constant or nothing."""
    if isinstance(expr, ast.BinOp):
        return _constant_operation(expr.left) and _constant_operation(expr.right)
    if isinstance(expr, ast.UnaryOp):
        return _constant_operation(expr.operand)
    return isinstance(expr, ast.Constant)


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


def _param_root(expr: ast.AST) -> str | None:
    """The name an access chain (`x`, `x.buf`, `xs[0]`) starts from; None for anything else."""
    while isinstance(expr, (ast.Attribute, ast.Subscript)):
        if isinstance(expr, ast.Attribute) and expr.attr in STATIC_ATTRS:
            return None
        expr = expr.value
    return expr.id if isinstance(expr, ast.Name) else None


def _comprehension_aliases(ctx: FileContext, function, params: set[str]) -> dict[str, str]:
    """Loop variables that run over a traced argument's elements or pytree leaves
    (`for leaf in jax.tree.leaves(params)`) -> that argument."""
    aliases = {}
    for node in _scope_nodes(function):
        if isinstance(node, (ast.comprehension, ast.For)) and isinstance(node.target, ast.Name):
            root = _param_root(_leaves_of(ctx, node.iter))
            if root in params:
                aliases[node.target.id] = root
    return aliases


def _leaves_of(ctx: FileContext, expr: ast.AST) -> ast.AST:
    """`jax.tree.leaves(p)`, `jax.tree.flatten(p)[0]` -> `p`: the leaves of a traced pytree are tracers."""
    if isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Call):
        expr = expr.value
    if isinstance(expr, ast.Call) and expr.args and public(ctx.qualname(expr.func)) in TREE_LEAVES:
        return expr.args[0]
    return expr


def _tainted_names(ctx: FileContext, function, traced: frozenset[str]) -> set[str]:
    """Parameters that are tracers and the locals computed from them or from jax calls
    (kept on the function per set of traced parameters: helpers and accesses both ask)."""
    cache = function.__dict__.setdefault("_jax001_tainted", {})
    if traced not in cache:
        cache[traced] = _taint(ctx, function, traced)
    return set(cache[traced])


def _taint(ctx: FileContext, function, traced: frozenset[str], eager: list[tuple[int, int]] = ()) -> set[str]:
    """The traced names; in ``eager`` lines (compile-time evaluation) a value is a tracer only
    when it is computed from one: `jnp.arange(3)` is a concrete array there."""
    tainted = set(traced)
    bindings = []
    for node in _scope_nodes(function):
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            bindings.append((targets, node.value))
        elif isinstance(node, (ast.For, ast.comprehension)):
            bindings.append(([node.target], node.iter))
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            bindings.append(([node.optional_vars], node.context_expr))
        elif isinstance(node, ast.NamedExpr):
            bindings.append(([node.target], node.value))
    changed = True
    while changed:
        changed = False
        for targets, value in bindings:
            in_eager = any(start <= value.lineno <= end for start, end in eager)
            if _mentions(value, tainted) if in_eager else _is_traced(ctx, value, tainted):
                for target in targets:
                    for name in ast.walk(target):
                        if isinstance(name, ast.Name) and name.id not in tainted:
                            tainted.add(name.id)
                            changed = True
    return tainted


def _mentions(expr: ast.AST, names: set[str]) -> bool:
    return any(isinstance(node, ast.Name) and node.id in names for node in ast.walk(expr))


def _is_traced(ctx: FileContext, expr: ast.AST, tainted: set[str]) -> bool:
    """Whether ``expr`` is certainly a tracer; unknown calls count as concrete (precision first)."""
    if isinstance(expr, ast.Name):
        return expr.id in tainted
    if isinstance(expr, ast.Attribute):
        # A concrete-only property is reported where it is read; its value is concrete.
        if expr.attr in STATIC_ATTRS or expr.attr in ALL_MEMBERS:
            return False
        return _is_traced(ctx, expr.value, tainted)
    if isinstance(expr, (ast.Subscript, ast.Starred)):
        return _is_traced(ctx, expr.value, tainted)
    if isinstance(expr, ast.BinOp):
        return _is_traced(ctx, expr.left, tainted) or _is_traced(ctx, expr.right, tainted)
    if isinstance(expr, ast.UnaryOp):
        return _is_traced(ctx, expr.operand, tainted)
    if isinstance(expr, ast.IfExp):
        return _is_traced(ctx, expr.body, tainted) or _is_traced(ctx, expr.orelse, tainted)
    if isinstance(expr, (ast.Tuple, ast.List)):
        return any(_is_traced(ctx, element, tainted) for element in expr.elts)
    if isinstance(expr, ast.Call):
        return _call_is_traced(ctx, expr, tainted)
    return False


def _call_is_traced(ctx: FileContext, call: ast.Call, tainted: set[str]) -> bool:
    if _as_access(ctx, call) is not None:
        return False  # reported where it is called; its value is concrete
    qualified = ctx.qualname(call.func)
    if qualified is None:
        # A method of a tracer (`x.reshape(-1)`) returns a tracer.
        return isinstance(call.func, ast.Attribute) and _is_traced(ctx, call.func.value, tainted)
    if public(qualified) in TREE_LEAVES:
        return bool(call.args) and _is_traced(ctx, call.args[0], tainted)
    if not qualified.startswith(ARRAY_MODULES):
        return False
    function = qualified.rsplit(".", 1)[1]
    if function in SHAPE_FUNCTIONS:
        return False
    if function in CREATION_FUNCTIONS:
        return True
    arguments = [*call.args, *(k.value for k in call.keywords)]
    return any(_is_traced(ctx, argument, tainted) for argument in arguments)


# Planning the split -------------------------------------------------------------------


@dataclass(frozen=True)
class SplitPlan:
    """How to split one jitted function; carried in Finding.data."""

    key: tuple[int, int]  # the `def` keyword's position, as libcst reports it
    traced_name: str
    call: str
    hoisted_lines: tuple[int, ...]
    copied_lines: tuple[int, ...]  # static statements the wrapper repeats
    docstring_line: int | None
    # (decorator index, `jax.jit` as spelled, its options' source) for `@jax.jit(...)`.
    jit_options: tuple[int, str, str] | None = None


def _plan_split(ctx: FileContext, region: _Region, traced: Traced, accesses: list[Access]):
    """(plan, fix safety, reason): a plan when the accesses can leave the trace."""
    function = traced.node
    if any(access.param is None for access in accesses):
        return None, FixSafety.NONE, "the function also reads a concrete-only API of an intermediate"
    if any(access.label == ".delete()" for access in accesses):
        return None, FixSafety.NONE, "deleting the argument before the call would break the call"
    body = list(function.body)
    docstring = body.pop(0) if _is_docstring(body[0]) else None
    seeds = {id(s): s for s in body if any(s.lineno <= a.node.lineno <= s.end_lineno for a in accesses)}
    hoisted, reason = _hoisted_statements(ctx, function, body, seeds)
    if not reason:
        static = {a.arg for a in all_params(function)} - traced.traced
        reason, copies = _dependency_problem(ctx, function, body, hoisted, static)
    if reason:
        return None, FixSafety.NONE, reason
    needed = _needed_in_trace(body, hoisted, copies)
    hoisted = [s for s in body if s in hoisted or (s in copies and s not in needed)]
    copies = needed
    if len(hoisted) == len(body):
        return None, FixSafety.NONE, "nothing would be left to trace"
    reason = _unsplittable(ctx, function, body, hoisted)
    if reason:
        return None, FixSafety.NONE, reason
    traced_name = _fresh_name(ctx, function.name)
    call = _forwarding_call(function, traced_name, isinstance(region.parents.get(function), ast.ClassDef))
    if call is None:
        return None, FixSafety.NONE, "a method without a positional `self` cannot be split automatically"
    fix = FixSafety.SAFE
    if _has_traced_defaults(function, traced.traced) or {a.param for a in accesses} & traced.donated:
        fix = FixSafety.UNSAFE
    span = ctx.span(function)
    plan = SplitPlan(
        key=(span.start_line, span.start_column),
        traced_name=traced_name,
        call=call,
        hoisted_lines=tuple(statement.lineno for statement in hoisted),
        copied_lines=tuple(statement.lineno for statement in copies),
        docstring_line=docstring.lineno if docstring else None,
        jit_options=_jit_options(ctx, function),
    )
    return plan, fix, None


def _jit_options(ctx: FileContext, function) -> tuple[int, str, str] | None:
    for index, decorator in enumerate(function.decorator_list):
        if (
            isinstance(decorator, ast.Call)
            and not decorator.args
            and decorator.keywords
            and public(ctx.qualname(decorator.func)) == JIT
        ):
            options = ", ".join(ctx.source_of(keyword) for keyword in decorator.keywords)
            return index, ctx.source_of(decorator.func), options
    return None


def _is_docstring(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


def _hoisted_statements(ctx: FileContext, function, body: list[ast.stmt], seeds: dict[int, ast.stmt]):
    """The body statements to move out: the accessing ones and those reading their names."""
    chosen = {id(s) for s in body if id(s) in seeds}
    while True:
        assigned = {name for s in body if id(s) in chosen for name in _assigned(s)}
        readers = {id(s) for s in body if id(s) not in chosen and _reads(s) & assigned}
        if not readers:
            break
        chosen |= readers
    hoisted = [s for s in body if id(s) in chosen]
    for statement in hoisted:
        if isinstance(statement, ast.Return):
            return [], "its value flows into the function's result"
        if isinstance(statement, _HOISTABLE) and getattr(statement, "value", None) is not None:
            continue
        if id(statement) in seeds and _movable_block(ctx, statement):
            continue
        if id(statement) not in seeds:
            return [], "its value flows into the traced computation"
        return [], "it is inside a compound statement"
    return hoisted, None


def _movable_block(ctx: FileContext, statement: ast.stmt) -> bool:
    """A compound statement that can leave the trace whole: a `for` over an argument or its
    pytree leaves, or a `with jax.named_scope(...)` (it only names traced operations), whose
    body is simple side-effect statements."""
    if isinstance(statement, ast.For):
        if statement.orelse or _param_root(_leaves_of(ctx, statement.iter)) is None:
            return False
    elif isinstance(statement, ast.With):
        if not all(
            isinstance(item.context_expr, ast.Call)
            and public(ctx.qualname(item.context_expr.func)) in TRANSPARENT
            and item.optional_vars is None
            for item in statement.items
        ):
            return False
    else:
        return False
    for inner in statement.body:
        if isinstance(inner, (ast.For, ast.With)):
            if not _movable_block(ctx, inner):
                return False
        elif not (isinstance(inner, _HOISTABLE) and getattr(inner, "value", None) is not None):
            return False
    return True


def _block_bound(statement: ast.stmt) -> set[str]:
    """Names a moved loop binds for its own body (`leaf` in `for leaf in ...`)."""
    if isinstance(statement, ast.For):
        return {n.id for n in ast.walk(statement.target) if isinstance(n, ast.Name)}
    return set()


def _dependency_problem(ctx: FileContext, function, body, hoisted, static: set[str]):
    """(reason, copies): why the hoisted statements cannot run before the trace, or the
    static statements (`n = x.shape[0]`) they need copied into the wrapper."""
    params = {a.arg for a in all_params(function)}
    local = _stored_names(function) | {
        node.name for node in _scope_nodes(function) if isinstance(node, (ast.FunctionDef, ast.ClassDef))
    }
    hoisted_names: set[str] = set()
    copies: list[ast.stmt] = []
    for statement in hoisted:
        if any(isinstance(node, _UNSPLITTABLE) for node in ast.walk(statement)):
            return "it assigns or yields inside an expression", []
        for name in sorted(_reads(statement) - params - hoisted_names - _block_bound(statement)):
            if name in local:
                unknown = local | (params - static)
                copy = _static_definition(
                    ctx, body, hoisted, statement, name, static | hoisted_names, unknown
                )
                if copy is None:
                    return f"it reads `{name}`, a value computed inside the trace", []
                copies.append(copy)
                hoisted_names.add(name)
        assigned = _assigned(statement)
        if assigned & params:
            return "it rebinds a parameter", []
        hoisted_names |= assigned
    return _read_back_problem(
        body, hoisted, hoisted_names - {n for c in copies for n in _assigned(c)}
    ), copies


def _static_definition(ctx, body, hoisted, reader, name, known: set[str], unknown: set[str]):
    """The one statement before ``reader`` that binds ``name`` from shapes, dtypes and constants."""
    definitions = [s for s in body if name in _assigned(s)]
    if len(definitions) != 1 or definitions[0] in hoisted:
        return None
    [definition] = definitions
    if not (
        isinstance(definition, ast.Assign)
        and definition.end_lineno < reader.lineno
        and all(isinstance(target, ast.Name) for target in definition.targets)
        and _is_static(ctx, definition.value, known, unknown)
    ):
        return None
    return definition


def _is_static(ctx: FileContext, expr: ast.AST, known: set[str], unknown: set[str]) -> bool:
    """Whether ``expr`` is computed from static attributes, static arguments, outer names and
    constants; ``unknown``: the names it must not read (tracers and other locals)."""
    if isinstance(expr, ast.Constant):
        return True
    if isinstance(expr, ast.Name):
        return expr.id in known or expr.id not in unknown
    if isinstance(expr, ast.Attribute) and expr.attr in STATIC_ATTRS:
        return _param_root(expr.value) is not None or _is_static(ctx, expr.value, known, unknown)
    if isinstance(expr, ast.Call):
        name = expr.func.id if isinstance(expr.func, ast.Name) else None
        if not (name in STATIC_BUILTINS or ctx.qualname(expr.func) in STATIC_FUNCTIONS) or expr.keywords:
            return False
        return all(_is_static(ctx, a, known, unknown) or name == "len" and _param_root(a) for a in expr.args)
    if isinstance(expr, (ast.Subscript, ast.Slice, ast.BinOp, ast.UnaryOp, ast.Compare, ast.Tuple, ast.List)):
        children = [
            c
            for c in ast.iter_child_nodes(expr)
            if not isinstance(c, (ast.operator, ast.unaryop, ast.cmpop, ast.expr_context))
        ]
        return all(_is_static(ctx, child, known, unknown) for child in children)
    return False


def _needed_in_trace(body, hoisted, copies) -> list[ast.stmt]:
    """The copied statements the traced body still reads; the others can simply move."""
    readers = [s for s in body if s not in hoisted and s not in copies]
    pending, needed = list(copies), []
    changed = True
    while changed:
        changed = False
        for copy in list(pending):
            if any(_assigned(copy) & _reads(reader) for reader in readers):
                pending.remove(copy)
                needed.append(copy)
                readers.append(copy)
                changed = True
    return needed


def _read_back_problem(body, hoisted, hoisted_names: set[str]) -> str | None:
    rest = [s for s in body if s not in hoisted]
    if any(_assigned(s) & hoisted_names for s in rest):
        return "its names are reassigned inside the trace"
    # `self.ptr = ...` read back by the trace would be baked into the compiled function.
    stored = {ast.unparse(target) for statement in hoisted for target in _item_targets(statement)}
    for statement in rest:
        for node in ast.walk(statement):
            if isinstance(node, (ast.Attribute, ast.Subscript)) and ast.unparse(node) in stored:
                return "the trace reads back what it stores"
    return None


def _item_targets(statement: ast.stmt) -> list[ast.expr]:
    targets = statement.targets if isinstance(statement, ast.Assign) else [getattr(statement, "target", None)]
    return [target for target in targets if isinstance(target, (ast.Attribute, ast.Subscript))]


def _assigned(statement: ast.stmt) -> set[str]:
    """Names a statement binds in the function (comprehension variables are their own scope)."""
    stored = {n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return stored - _locally_bound(statement)


def _reads(statement: ast.stmt) -> set[str]:
    """Free names a statement reads."""
    loaded = {n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return loaded - _locally_bound(statement)


def _locally_bound(statement: ast.stmt) -> set[str]:
    bound = set()
    for node in ast.walk(statement):
        if isinstance(node, ast.comprehension):
            bound |= {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.Lambda):
            bound |= {a.arg for a in all_params(node)}
    return bound


def _unsplittable(ctx: FileContext, function, body, hoisted) -> str | None:
    lines = [s.lineno for s in function.body]
    for statement in hoisted:
        index = function.body.index(statement)
        following = function.body[index + 1] if index + 1 < len(function.body) else None
        if lines.count(statement.lineno) > 1 or (following and following.lineno == statement.end_lineno):
            return "it shares a line with another statement"
    if any(isinstance(node, (ast.Global, ast.Nonlocal)) for node in _scope_nodes(function)):
        return "it declares `global` or `nonlocal` names"
    name, attributes = re.escape(function.name), "|".join(JITTED_ATTRS)
    jitted_attribute = re.search(rf"\b{name}\s*\.\s*({attributes})\b", ctx.text) or re.search(
        rf"\b(?:getattr|hasattr)\s*\(\s*{name}\s*,\s*[\"']({attributes})[\"']", ctx.text
    )
    if jitted_attribute:
        return f"the file uses `{function.name}.{jitted_attribute.group(1)}`, which a plain wrapper does not have"
    return None


def _fresh_name(ctx: FileContext, name: str) -> str:
    """A private name that appears nowhere in the file."""
    base = f"_{name.strip('_') or 'fn'}_traced"
    candidate, counter = base, 2
    while re.search(rf"\b{candidate}\b", ctx.text):
        candidate, counter = f"{base}{counter}", counter + 1
    return candidate


def _forwarding_call(function, traced_name: str, is_method: bool) -> str | None:
    args = function.args
    positional = [a.arg for a in (*args.posonlyargs, *args.args)]
    callee = traced_name
    if is_method:
        if not positional:
            return None
        callee = f"{positional.pop(0)}.{traced_name}"
    parts = positional[:]
    if args.vararg:
        parts.append(f"*{args.vararg.arg}")
    parts += [f"{a.arg}={a.arg}" for a in args.kwonlyargs]
    if args.kwarg:
        parts.append(f"**{args.kwarg.arg}")
    return f"{callee}({', '.join(parts)})"


def _has_traced_defaults(function, traced: frozenset[str]) -> bool:
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    defaulted = list(zip(positional[len(positional) - len(args.defaults) :], args.defaults))
    defaulted += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
    return any(
        arg.arg in traced and not (isinstance(default, ast.Constant) and default.value is None)
        for arg, default in defaulted
    )


# Messages -------------------------------------------------------------------------


_ADVICE = {
    ".nonzero()": "pass `size=` (and `fill_value=`) so that its result has a static shape",
    ".item()": "a Python number cannot come out of a trace: keep the value an array, or make the "
    "argument static with `static_argnums`/`static_argnames`",
    ".tolist()": "a Python list cannot come out of a trace: keep the value an array, or convert the "
    "result after the jitted call returns",
}


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
    if _param_root(access.receiver) != access.param:
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
        f"{head}; no automatic fix because {traced.unsplittable or reason}: move the access outside the "
        "jitted function onto the concrete array (make the argument static with `static_argnums`/"
        "`static_argnames` if it must be concrete), or take it from the result after the call"
    )


# The split ---------------------------------------------------------------------------


def _split(module: cst.Module, plans: dict) -> tuple[cst.Module, int]:
    """Replace each planned function by its traced body and a plain wrapper; (module, splits)."""
    from libcst.metadata import MetadataWrapper

    splitter = _splitter_class()(plans)
    return MetadataWrapper(module, unsafe_skip_copy=True).visit(splitter), splitter.done


@cache
def _splitter_class():
    import libcst as cst
    from libcst.metadata import PositionProvider

    class Splitter(cst.CSTTransformer):
        METADATA_DEPENDENCIES = (PositionProvider,)

        def __init__(self, plans: dict) -> None:
            super().__init__()
            self.plans = dict(plans)
            self.depth = 0
            self.done = 0

        def visit_ClassDef(self, node) -> None:
            self.depth += 1

        def leave_ClassDef(self, original, updated):
            self.depth -= 1
            return updated

        def visit_FunctionDef(self, node) -> None:
            self.depth += 1

        def leave_FunctionDef(self, original, updated):
            self.depth -= 1
            start = self.get_metadata(PositionProvider, original).start
            # By line alone: no two functions start on one line, and libcst's columns on a line
            # indented with a form feed are short of ast's (it drops the form feed).
            key = next((key for key in self.plans if key[0] == start.line), None)
            planned = self.plans.pop(key) if key is not None else None
            if planned is None:
                return updated
            plan, partial = planned
            lines = [self.get_metadata(PositionProvider, s).start.line for s in original.body.body]
            if len(lines) != len(updated.body.body):
                return updated  # a function nested in it was just split; the engine's next pass does this one
            self.done += 1
            kept, moved, docstring = [], [], []
            detached: list = []  # comments above a moved statement, set off by a blank line
            for line, statement in zip(lines, updated.body.body):
                if line == plan.docstring_line:
                    docstring.append(statement)
                elif line in plan.hoisted_lines:
                    own, other = _attached_comments(statement.leading_lines)
                    detached += other
                    moved.append(statement.with_changes(leading_lines=own))
                elif line in plan.copied_lines:
                    moved.append(statement)
                    kept.append(statement)
                else:
                    if detached:
                        # A comment about the traced computation stays with it.
                        statement = statement.with_changes(leading_lines=[*detached, *statement.leading_lines])
                        detached = []
                    kept.append(statement)
            kept[0] = _without_leading_blanks(kept[0])
            moved = [*docstring, *moved]
            moved[0] = _without_leading_blanks(moved[0])
            decorators = list(updated.decorators)
            if plan.jit_options is not None:
                # `@jax.jit(...)` is JAX 0.8.1+; the traced copy uses a spelling every
                # supported JAX accepts.
                index, jit, options = plan.jit_options
                decorators[index] = decorators[index].with_changes(
                    decorator=cst.parse_expression(f"{partial}({jit}, {options})")
                )
            traced = updated.with_changes(
                name=cst.Name(plan.traced_name), decorators=decorators, body=updated.body.with_changes(body=kept)
            )
            returned = cst.parse_statement(f"return {plan.call}\n")
            wrapper = updated.with_changes(
                decorators=[],
                leading_lines=[cst.EmptyLine(indent=False)] * (1 if self.depth else 2),
                lines_after_decorators=[],
                body=updated.body.with_changes(body=[*moved, returned], header=cst.TrailingWhitespace(), footer=[]),
            )
            return cst.FlattenSentinel([traced, wrapper])

    return Splitter


def _attached_comments(leading_lines) -> tuple[list, list]:
    """(the comment lines right above a statement, those set off from it by a blank line)."""
    lines = list(leading_lines)
    last_blank = max((i for i, line in enumerate(lines) if line.comment is None), default=-1)
    detached = lines[: last_blank + 1]
    if not any(line.comment is not None for line in detached):
        return lines, []
    return lines[last_blank + 1 :], detached


def _without_leading_blanks(statement):
    lines = list(statement.leading_lines)
    while lines and lines[0].comment is None:
        lines.pop(0)
    return statement.with_changes(leading_lines=lines)
