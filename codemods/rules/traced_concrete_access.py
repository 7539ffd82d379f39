"""JAX001: concrete-only array APIs called on tracers inside a traced function."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING

from jax_codemod.analysis import api, jax_versions, taint, tracing
from jax_codemod.analysis.context import FileContext
from jax_codemod.analysis.expected_errors import EAGER_UNDER_DISABLE_JIT, runs_only_under_disable_jit
from jax_codemod.analysis.guards import not_a_tracer
from jax_codemod.analysis.jax_versions import OLDEST_SUPPORTED
from jax_codemod.analysis.partial import Parts, Reading
from jax_codemod.analysis.partial_receivers import PartialReceivers, Undecided, file_receivers, holds_tracer
from jax_codemod.analysis.taint import mentions, param_root
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
    own_nodes,
    tracing_for,
)
from jax_codemod.analysis.transforms import JIT_LIKE, TRANSFORMS, Spellings, all_params, spellings_of
from jax_codemod.analysis.words import decorated_def_lines, lines_of
from jax_codemod.rule import Finding, FixSafety, Rule
from jax_codemod.rules._access_text import Access, AccessText, names_transform, transform_calls
from jax_codemod.rules._hoist import plan_split, split
from jax_codemod.rules._traced_across import INHERITED, calls_across, reaches_across

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
BUFFER_METHODS = {"from_buffer": "cffi", "from_buffer_copy": "ctypes"}
# Where accesses can be, from the text alone: the prefilter, the access lines, the partial reading.
TEXT = AccessText(TRACER_MEMBERS, CONSUMERS, BUFFER_METHODS, ffi_class="cffi.FFI")
# The tracing answer's tables, by the names this rule's tests compare with the API table.
STATIC_ATTRS, ARRAY_MODULES, TREE_MAPS, TREE_LEAVES = (
    taint.STATIC_ATTRS, taint.ARRAY_MODULES, tracing.TREE_MAPS, taint.TREE_LEAVES
)
CREATION_FUNCTIONS, SHAPE_FUNCTIONS = taint.CREATION_FUNCTIONS, taint.SHAPE_FUNCTIONS


class TracedConcreteAccess(Rule):
    """## What it does
    Finds concrete-only `jax.Array` APIs used on tracers inside a traced function: every member of
    `jax.core.Tracer` that raises `ConcretizationTypeError` or a sibling (`unsafe_buffer_pointer()`,
    `on_device_size_in_bytes()`, `tolist()`, `tobytes()`, `item()`, `nonzero()` without `size=`,
    `devices()`, `delete()`, `addressable_data()`, `__dlpack__()`, `__array__()`,
    `addressable_shards`, `global_shards`, `is_fully_addressable`, `is_fully_replicated`,
    `committed`, `traceback`), the ones a tracer hides (`sharding`, `device`, `block_until_ready()`,
    `is_ready()`, `__dlpack_device__()`, `format`; also named by a string: `getattr(x, "committed",
    None)`, `hasattr(x, "traceback")`), and consumers that need a concrete buffer
    (`torch.from_dlpack`/`as_tensor`/`tensor`/`asarray`, NumPy's
    `asarray`/`array`/`from_dlpack`/`frombuffer`, CuPy, `memoryview`, `bytes`, `pickle`, cffi's
    `ffi.from_buffer`, ctypes' `from_buffer_copy`), also where a pytree map runs one on every leaf
    (`jax.tree.map(np.asarray, batch)`). The table is keyed by JAX version and checked against the
    installed JAX. Traced functions are found however they are spelled: `jax.jit` and its aliases,
    `functools.partial(jax.jit, ...)`, `@jax.jit(...)`, decorator factories, `jax.jit(f)` and
    `jax.jit(self._step)` calls, jitted dicts and comprehensions, `equinox.filter_jit`,
    `flax.nnx.jit`, the other transforms (`vmap`, `grad`, `pmap`, `shard_map`, `checkpoint`, `lax`
    control flow, equinox's and flax's), helpers called from inside a trace (methods too:
    `model(x)`, `Model().encode(x)`, flax's `model.apply(variables, x, method=...)`), and the pytree
    leaves of a traced argument. Across the modules of a project: a tracer handed to another
    module's function or method (imported, of an imported class's instance, called or applied, or
    inherited) that reads such a member of it is reported at the call, naming where the access is,
    as is such a function transformed as it is (`jax.jit(to_host)`); an override of a hook an
    imported base class's traced method calls through `self` is reported in the override.

    ## Why is this bad?
    Inside a trace the arguments are abstract tracers with no buffer behind them: these calls raise
    `ConcretizationTypeError` (or `TracerArrayConversionError`, `AttributeError` or `TypeError` for
    NumPy, DLPack and buffer-protocol consumers) the first time the function is traced; what
    `jax.device_get`, `jax.device_put` or a host callback returns inside a trace is a tracer too. Static
    attributes (`shape`, `dtype`, `ndim`, `size`), values captured from module or closure scope, static
    arguments, unmapped (`in_axes=None`) and undifferentiated arguments, and the arrays host callbacks
    (`jax.pure_callback`, `jax.debug.callback`, `io_callback`) receive are concrete and are not
    reported; nor are `item()` and `nonzero()` in a function only differentiated (`jax.grad`, `jvp`,
    `vjp`, ... alone: a JVP tracer's primal is concrete), nor values computed from constants inside
    `with jax.ensure_compile_time_eval():`.

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
    Safe when the accesses are side-effect statements or `assert`s (or a `for` loop over an argument
    or its pytree leaves, a `with jax.named_scope(...)` or `with torch.no_grad():` block, or an `if`
    that tests only whether an argument is a `jax.Array` and its static attributes, made of them) of
    a function decorated by `jax.jit`, `equinox.filter_jit` or `flax.nnx.jit` in any spelling
    (aliases, `functools.partial`, factories, `@jax.jit(...)`, with `jax.named_call`/`named_scope`
    decorators alongside), that read only its parameters, module or closure names and locals
    computed from shapes, dtypes and static arguments (`n = x.shape[0]`, repeated in the wrapper),
    and whose assigned names feed nothing but other hoisted statements. The fix keeps the traced
    body under a private name with the same decorators and puts a plain wrapper with the original
    name and signature in front of it: the hoisted statements run on the concrete arguments on every
    call (the original would have run them once per trace, and failed), then the wrapper forwards
    every argument. Methods forward through `self`. `@jax.jit(...)` (JAX 0.8.1+) becomes
    `@functools.partial(jax.jit, ...)` on the traced copy, so the fixed file runs on every supported
    JAX. A comment right above a hoisted statement, and its trailing comment, move with it; a
    comment set off by a blank line describes the traced computation and stays. Call sites keep
    working; attributes of the jitted object (`step.lower(...)`) are no longer on the wrapper, so a
    file that uses them is reported instead, as is a function that another module of the project
    imports (itself, its module or its class) and uses them on: the message names that module and
    line. The fix is unsafe when a non-static parameter has a default other than `None` (forwarded
    explicitly, it becomes a traced argument instead of a Python constant) or when an accessed
    argument is donated (the hoisted pointer or export outlives the donated buffer). When the value
    flows into the traced computation or the result, is read from an intermediate of the trace, the
    function is traced by `vmap`, `grad`, `pmap`, `shard_map`, `checkpoint`, a `lax` control-flow
    body, a lifted linen transform or a `jax.jit(f)` call (where `f` may also run eagerly), or it is
    a helper called from inside a trace (in this module or another), the rule reports without a fix.
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
        relevant=TEXT.relevant,
        keeps_call=TEXT.keeps_call,
        cuts_class=TEXT.cuts_class,
        unliftable=("ffi",),  # ``AccessText.ffi_names`` reads module-level imports only
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
            and names_transform(source)
            and TEXT.may_access(source)
        )

    PROJECT_PREFILTER = True

    def project_prefilter(self, source: bytes, project) -> bool:
        return reaches_across(source, None, project, TEXT) is not None

    def project_needs(self) -> tuple[bytes, ...]:  # transforms resolve by qualified name: their library is spelled
        return tuple(sorted({name.split(".", 1)[0].encode() for name in TRANSFORMS}))

    def check(self, ctx: FileContext) -> list[Finding]:
        # A call into another module's access (issue 34), or an override another module's trace calls.
        across = ctx.project is not None and reaches_across(None, ctx.text, ctx.project, TEXT)
        findings = self._across(ctx, members_in(jax_versions.target(self.options))) if across else []
        if across and across != INHERITED and not TEXT.any_access_line(ctx.text):
            return findings  # nothing of its own to find (the project gate passed it for its calls)
        # Most files are decided clean from their blocks before their access lines matter:
        # those are found only once a kept block may hold a traced access.
        if not across and self.clean_from_parts(ctx):
            return []
        access_lines = TEXT.access_lines(ctx.text)
        if not access_lines:
            return findings
        members = members_in(jax_versions.target(self.options))
        return findings + [
            finding
            for traced, accesses, region in _analyse(ctx, access_lines, members)
            for finding in self._check_function(ctx, region, traced, accesses)
        ]

    def _across(self, ctx: FileContext, members) -> list[Finding]:
        found = calls_across(ctx, lambda m, t: _accesses(m, t, members, TEXT.ffi_names(m)), _REPORTED, TEXT)
        return [self.finding(ctx, h.call, h.message, FixSafety.NONE, raises=(_access_error(h.ctx, h.access),)) for h in found]

    def clean_in(self, reading: Reading) -> bool:
        """Whether the blocks that can matter show there is no finding (``Rule.clean_in``).

        Most files that get here have none, and parsing all of one costs more than the rest
        of the check. On any doubt (a receiver only the whole-file value analysis judges, a
        candidate access) the answer is False and the whole file is read.
        """
        # A file without access lines has no finding (check() stops there, even where an
        # aliased consumer is called: `to_host(x)`)...
        if not TEXT.any_access_line(reading.cut.text):
            return True
        # ...and the partial text is the file's at the kept blocks' lines, stubs (no dot, no
        # call) elsewhere: its access lines are the file's in the kept blocks, the only ones an
        # access of the partial tree can be on, found in a fraction of the text.
        partial = reading.context
        members = members_in(jax_versions.target(self.options))
        try:
            return not _analyse(
                partial, TEXT.access_lines(partial.text), members, exact=PartialReceivers(reading.cut.text, partial.tree, reading.cut)
            )
        except Undecided:
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


def _analyse(ctx: FileContext, access_lines: set[int], members, exact: bool = True):
    """(traced function, its accesses, the region) for each traced function with an access.

    ``exact=False``: ``ctx`` is a partial context (``analysis.partial``); an access whose
    receiver only the whole-file value analysis can judge raises ``Undecided``."""
    spellings = spellings_of(ctx)
    region = _candidate_region(ctx, access_lines, spellings)
    buffers = TEXT.ffi_names(ctx)
    traced_functions = tracing_for(ctx).traced_functions(region, spellings, _REPORTED)
    return [(t, accesses, region) for t in traced_functions if (accesses := _accesses(ctx, t, members, buffers, exact))]


def _candidate_region(ctx: FileContext, access_lines: set[int], spellings: Spellings) -> Region:
    # Decorated functions too: a helper with an access may be called from one.
    candidates = access_lines | lines_of(ctx.text, sorted(transform_calls(ctx.text, spellings)))
    if "\r" in ctx.text:
        # `_decorated_def_lines` reads `\n` line ends only; a file with old Mac ones (rare) asks
        # the tree: a jitted function without candidate lines of its own was missed there.
        decorated = {
            node.lineno
            for node in ast.walk(ctx.tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.decorator_list
        }
    else:
        decorated = decorated_def_lines(ctx.text)
    return Region(ctx.tree, sorted(candidates | decorated))


def candidate_accesses(ctx: FileContext, members, judged: bool = False) -> set[tuple]:
    """The traced functions of ``ctx`` that hold a node the rule checks as an access, each as
    (line, column, transform, traced parameters, why it is unsplittable, the caller it is a
    helper of, the positions of those nodes); ``judged``: only the accesses whose receivers may
    be tracers (those ``check`` reports). What a partial reading must find as the whole file
    does: its tests compare the two."""
    found = set()
    if judged:
        for traced, accesses, _ in _analyse(ctx, TEXT.access_lines(ctx.text), members):
            node = traced.node
            positions = tuple(sorted((a.node.lineno, a.node.col_offset) for a in accesses))
            found.add((node.lineno, node.col_offset, traced.transform, tuple(sorted(traced.traced)),
                       traced.unsplittable, traced.caller, positions))
        return found
    spellings = spellings_of(ctx)
    region = _candidate_region(ctx, TEXT.access_lines(ctx.text), spellings)
    buffers = TEXT.ffi_names(ctx)
    for traced in tracing_for(ctx).traced_functions(region, spellings, _REPORTED):
        nodes = list(own_nodes(traced.node))
        called = {id(n.func) for n in nodes if isinstance(n, ast.Call)}
        positions = tuple(
            sorted((n.lineno, n.col_offset) for n in nodes if TEXT.as_access(ctx, n, called, members, buffers) is not None)
        )
        if positions:
            node = traced.node
            found.add((node.lineno, node.col_offset, traced.transform, tuple(sorted(traced.traced)),
                       traced.unsplittable, traced.caller, positions))
    return found


# Finding the accesses -------------------------------------------------------------


def _accesses(
    ctx: FileContext, traced: Traced, members: dict[str, Member], buffers: frozenset[str], exact: bool = True
) -> list[Access]:
    function, answer = traced.node, tracing_for(ctx)
    # Only calls and attributes can be accesses (the parser makes no subclasses of them).
    nodes = [node for node in answer.scope_nodes(function) if node.__class__ is ast.Call or node.__class__ is ast.Attribute]
    called = {id(node.func) for node in nodes if node.__class__ is ast.Call}
    # A helper often guards concrete-only code (`if isinstance(x, core.Tracer): return x`): only
    # its statements before the first compound one surely run on the tracer; nor does an access
    # where a test shows the receiver is none (`if not isinstance(y, core.Tracer):`).
    first = (first_compound_line(function) if traced.caller else None) or function.end_lineno + 1
    candidates = []
    for node in nodes:
        access = TEXT.as_access(ctx, node, called, members, buffers)
        if access is not None and node.lineno < first and not not_a_tracer(ctx, node, access[0]):
            candidates.append((node, access))
    if not candidates:
        return []  # most traced functions: no need for their taint (nor the question below)
    # jit traces nothing under `jax.disable_jit()`, where alone it may run: asked once an access
    # is found, or where a partial reading cannot judge a receiver (``Undecided``).
    eager_only = traced.caller is None and traced.transforms <= EAGER_UNDER_DISABLE_JIT and (
        lambda: runs_only_under_disable_jit(ctx, function))
    stored = answer.stored_names(function)
    params = {name for name in traced.traced if name not in stored}
    # Parameters this rule decided about (static ones are concrete, whatever another spelling's analysis says).
    every = {a.arg for a in all_params(function)} - stored
    aliases = answer.comprehension_aliases(function, params)
    tainted = answer.tainted_names(function, traced.traced, _REPORTED)
    differentiated = traced.transforms <= DIFFERENTIATION
    eager = answer.compile_time_eval_lines(function)
    found = []
    for node, (receiver, label) in candidates:
        if differentiated and _member_of(label, members).differentiable:
            continue  # a JVP tracer's primal is concrete: the member works
        if label == ".sharding" and answer.only_under_config_flag(function, node, _SHARDING_IN_TYPES):
            continue
        root = param_root(receiver)
        if any(start <= node.lineno <= end for start, end in eager):
            # JAX computes eagerly here: only what comes from a traced argument is a tracer.
            if mentions(receiver, answer.taint(function, traced.traced, eager, _REPORTED)):
                found.append(Access(node, receiver, label, aliases.get(root, root) if root in params else None))
            continue
        if root in params or root in aliases:
            found.append(Access(node, receiver, label, aliases.get(root, root)))
        elif answer.is_traced(receiver, tainted, _REPORTED):
            found.append(Access(node, receiver, label, None))
        elif _base_name(receiver) not in every:
            # The shared value analysis follows what the local taint does not: containers,
            # `self` attributes, records, helpers' return values, closures over a trace.
            try:
                if holds_tracer(answer, receiver, exact, file_receivers(ctx, TEXT.cuts_class) if exact is True else None):
                    found.append(Access(node, receiver, label, None))
            except Undecided:
                if eager_only and eager_only():
                    return []
                raise
    return [] if found and eager_only and eager_only() else sorted(found, key=lambda a: (a.node.lineno, a.node.col_offset))


_NO_MEMBER = Member("", None)
# JAX's `sharding_in_types` flag (0.4.36 to 0.5): with it on, an abstract value carries its
# sharding, and a tracer's `.sharding` (whose property raises AttributeError) falls back to
# `Tracer.__getattr__`, which answers from the aval (jax/_src/core.py of 0.4.38).
_SHARDING_IN_TYPES = "sharding_in_types"


def _member_of(label: str, members: dict[str, Member]) -> Member:
    """The table's member an access label (`.item()`, `.sharding`) names; a consumer's: none."""
    if not label.startswith("."):
        return _NO_MEMBER
    return members.get(label[1:].removesuffix("()"), _NO_MEMBER)


def _base_name(expr: ast.AST) -> str | None:
    while isinstance(expr, (ast.Attribute, ast.Subscript, ast.Call)):
        expr = expr.func if isinstance(expr, ast.Call) else expr.value
    return expr.id if isinstance(expr, ast.Name) else None


ALL_MEMBERS = members_for(None)


def _access_error(ctx: FileContext, access: Access) -> str:
    """What ``access`` raises on a tracer: its member's error, or its consumer's."""
    if access.label.startswith("."):
        return _member_of(access.label, ALL_MEMBERS).error
    node = access.node
    consumer = (TEXT.consumer(ctx, node.func) or TEXT.mapped_consumer(ctx, node)) if isinstance(node, ast.Call) else None
    return consumer.error if consumer is not None else "TypeError"


# What this rule reports is concrete after it: the taint does not follow it (the trace raises there).
def _reported(ctx: FileContext, call: ast.Call) -> bool:
    return TEXT.as_access(ctx, call) is not None


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
    # (The other messages of a helper say it in their reason: ``CALLED_IN_TRACE``.)
    through = f" (called from the traced `{traced.caller}`)" if traced.caller else ""
    if advice and fix is FixSafety.NONE:
        return f"{what}, but `{receiver}` is a tracer {where}{through}; {advice}"
    if access.param is None:
        return (
            f"{what}, but `{receiver}` is computed {where}{through}; call it on the concrete result after the "
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
