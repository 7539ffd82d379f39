"""JAX001: concrete-only array APIs called on tracers inside a traced function."""

from __future__ import annotations

import ast
import bisect
import re
from dataclasses import dataclass

import libcst as cst
from jax_codemod.analysis.context import FileContext
from jax_codemod.rule import Finding, FixSafety, Rule
from libcst.metadata import MetadataWrapper, PositionProvider

# Concrete-only methods of jax.Array -> how many positional arguments they take.
METHODS = {
    "unsafe_buffer_pointer": 0,
    "on_device_size_in_bytes": 0,
    "devices": 0,
    "delete": 0,
    "is_deleted": 0,
    "addressable_data": 1,
    "__dlpack__": 0,
    "__dlpack_device__": 0,
}
PROPERTIES = frozenset({"is_fully_replicated", "addressable_shards", "traceback"})
# Consumers that need a concrete buffer (DLPack export or host conversion).
CONSUMERS = frozenset(
    {
        "torch.from_dlpack",
        "torch.utils.dlpack.from_dlpack",
        "numpy.from_dlpack",
        "numpy.asarray",
        "numpy.array",
        "cupy.from_dlpack",
    }
)
# Attributes a tracer answers from its abstract value: reading them is fine in a trace.
STATIC_ATTRS = frozenset(
    {"shape", "dtype", "ndim", "size", "aval", "weak_type", "itemsize", "nbytes", "named_shape", "__class__"}
)
# Calls that keep a static value static (`n = math.prod(x.shape)`).
STATIC_BUILTINS = frozenset({"len", "int", "float", "bool", "tuple", "min", "max", "abs"})
STATIC_FUNCTIONS = frozenset({"math.prod", "numpy.prod"})
# Inside a trace, these jax functions return tracers...
ARRAY_MODULES = ("jax.numpy.", "jax.lax.", "jax.random.", "jax.nn.", "jax.scipy.")
CREATION_FUNCTIONS = frozenset(
    {"zeros", "ones", "full", "empty", "arange", "linspace", "eye", "identity", "array", "asarray", "iota"}
)
# ...except these, which answer from shapes and dtypes.
SHAPE_FUNCTIONS = frozenset(
    {
        "shape",
        "ndim",
        "size",
        "broadcast_shapes",
        "result_type",
        "dtype",
        "iinfo",
        "finfo",
        "issubdtype",
        "promote_types",
        "can_cast",
        "isdtype",
        "canonicalize_dtype",
    }
)
# jax's own modules re-export these under the public names.
_PRIVATE_PREFIXES = (
    ("jax._src.api.", "jax."),
    ("jax._src.ad_checkpoint.", "jax."),
    ("jax._src.shard_map.", "jax."),
    ("jax.experimental.shard_map.", "jax."),
    ("jax._src.lax.control_flow.loops.", "jax.lax."),
    ("jax._src.lax.control_flow.conditionals.", "jax.lax."),
    ("jax._src.lax.control_flow.", "jax.lax."),
)
JIT = "jax.jit"
PARTIAL = "functools.partial"
# Transforms under which hoisting would change meaning -> (positions of the traced
# functions among the call's arguments, the option naming traced argument positions).
REPORT_TRANSFORMS = {
    "jax.vmap": ((0,), "in_axes"),
    "jax.pmap": ((0,), None),  # traced like jit, whatever in_axes says
    "jax.grad": ((0,), "argnums"),
    "jax.value_and_grad": ((0,), "argnums"),
    "jax.jacfwd": ((0,), "argnums"),
    "jax.jacrev": ((0,), "argnums"),
    "jax.hessian": ((0,), "argnums"),
    "jax.checkpoint": ((0,), None),
    "jax.remat": ((0,), None),
    "jax.shard_map": ((0,), None),
    "jax.jvp": ((0,), None),
    "jax.vjp": ((0,), None),
    "jax.linearize": ((0,), None),
    "jax.lax.scan": ((0,), None),
    "jax.lax.map": ((0,), None),
    "jax.lax.associative_scan": ((0,), None),
    "jax.lax.while_loop": ((0, 1), None),
    "jax.lax.fori_loop": ((2,), None),
    "jax.lax.cond": ((1, 2), None),
    "jax.lax.switch": ((1,), None),
}
# Attributes of a jitted function that a plain wrapper does not have.
JITTED_ATTRS = frozenset({"lower", "trace", "eval_shape", "clear_cache", "_cache_size", "__wrapped__"})
# Lines that may hold an access, and lines that may call a transform: only the parts of
# the tree that cover them are walked. Supersets are fine; these are found with str.find.
_ACCESS_MARKS = (
    "unsafe_buffer_pointer",
    "on_device_size_in_bytes",
    "is_fully_replicated",
    "addressable_",
    ".traceback",
    ".devices(",
    ".delete(",
    ".is_deleted(",
    "__dlpack",
    "from_dlpack",
    "array(",
)
# The last component of every transform's name, and of functools.partial.
_TRANSFORM_NAMES = frozenset({"jit", "partial", *(name.rsplit(".", 1)[1] for name in REPORT_TRANSFORMS)})
_CALL_MARKS = tuple(f"{name}(" for name in _TRANSFORM_NAMES)
_TRANSFORM_MARKS = (
    b"jit",
    b"map",
    b"grad",
    b"jac",
    b"hessian",
    b"checkpoint",
    b"remat",
    b"jvp",
    b"vjp",
    b"linearize",
    b"lax",
)
# Names bound to something under another spelling (`from jax import jit as compile`,
# `fast = jax.jit`): the only bare names worth resolving besides the transforms' own.
_ALIAS = re.compile(r"\bas\s+(\w+)|^(\w+)\s*=", re.MULTILINE)
_BY_CALL = "the function is jitted by a call and may also run eagerly"
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_HOISTABLE = (ast.Expr, ast.Assign, ast.AnnAssign)
_UNSPLITTABLE = (ast.Yield, ast.YieldFrom, ast.Await, ast.NamedExpr, ast.Global, ast.Nonlocal)


@dataclass
class Traced:
    """One function whose parameters are tracers, and how it came to be traced."""

    node: ast.FunctionDef | ast.Lambda
    transform: str
    traced: frozenset[str]
    donated: frozenset[str] = frozenset()
    # Why the fix cannot split it, for a jitted function; None when it can.
    unsplittable: str | None = None


@dataclass(frozen=True)
class Access:
    node: ast.AST
    receiver: ast.AST
    label: str
    param: str | None  # the traced parameter it is read from, or None for an intermediate


class TracedConcreteAccess(Rule):
    """## What it does
    Finds concrete-only `jax.Array` APIs used on tracers inside a traced function:
    `unsafe_buffer_pointer()`, `on_device_size_in_bytes()`, `is_fully_replicated`,
    `addressable_data(...)`, `addressable_shards`, `traceback`, `devices()`, `delete()`,
    `__dlpack__()`, and DLPack or host consumers (`torch.from_dlpack(x)`, `np.asarray(x)`)
    on the arguments of a function traced by `jax.jit`, `vmap`, `grad`, `pmap`,
    `shard_map`, `checkpoint` or a `lax` control-flow body.

    ## Why is this bad?
    Inside a trace the arguments are abstract tracers with no buffer behind them: these
    calls raise `ConcretizationTypeError` (or `AttributeError` /
    `TracerArrayConversionError` for DLPack and NumPy consumers) the first time the
    function is traced. Static attributes (`shape`, `dtype`, `ndim`, `size`), values
    captured from module or closure scope and static arguments are concrete and are not
    reported.

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
    Safe when the accesses are side-effect statements of a function decorated by `jax.jit`
    alone (any spelling, including `functools.partial(jax.jit, ...)` and `jax.jit(...)`
    with options), that read only its parameters, module or closure names and locals
    computed from shapes, dtypes and static arguments (`n = x.shape[0]`, repeated in the
    wrapper), and whose assigned names feed nothing but other hoisted statements. The fix keeps the traced body
    under a private name with the same decorator and puts a plain wrapper with the original
    name and signature in front of it: the hoisted statements run on the concrete arguments
    on every call (the original would have run them once per trace, and failed), then the
    wrapper forwards every argument. Methods forward through `self`. Call sites keep
    working; attributes of the jitted object (`step.lower(...)`) are no longer on the
    wrapper, so a file that uses them is reported instead, and uses in other files are not
    seen. The fix is unsafe when a non-static parameter has a default other than `None`
    (forwarded explicitly, it becomes a traced argument instead of a Python constant) or
    when an accessed argument is donated (the hoisted pointer or export outlives the
    donated buffer). When the value flows into the traced computation or the result, is
    read from an intermediate of the trace, or the function is traced by `vmap`, `grad`,
    `pmap`, `shard_map`, `checkpoint`, a `lax` control-flow body or a `jax.jit(f)` call
    (where `f` may also run eagerly), the rule reports without a fix.
    """

    CODE = "JAX001"
    NAME = "traced-concrete-access"
    DEFAULT_ENABLED = True
    FIX_SAFETY = FixSafety.SAFE
    TRIGGERS = tuple(mark.encode() for mark in _ACCESS_MARKS)

    def prefilter(self, source: bytes) -> bool:
        # Every transform is jax's: a file that names none of them traces nothing.
        return (
            b"jax" in source
            and super().prefilter(source)
            and any(mark in source for mark in _TRANSFORM_MARKS)
        )

    def check(self, ctx: FileContext) -> list[Finding]:
        access_lines = _matching_lines(ctx.text, _ACCESS_MARKS)
        if not access_lines:
            return []
        region = _Region(ctx.tree, sorted(access_lines | _matching_lines(ctx.text, _CALL_MARKS)))
        findings: list[Finding] = []
        for traced in _traced_functions(ctx, region):
            accesses = _accesses(ctx, traced)
            if accesses:
                findings.extend(self._check_function(ctx, region, traced, accesses))
        return findings

    def _check_function(
        self, ctx: FileContext, region, traced: Traced, accesses: list[Access]
    ) -> list[Finding]:
        plan, fix, reason = None, FixSafety.NONE, None
        if traced.transform == JIT and traced.unsplittable is None:
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
            )
            for access in accesses
        ]

    def rewrite(self, original, updated, finding: Finding, fixer):
        # The access itself stays; the function around it is split once, in finalize.
        plan = finding.data[0]
        fixer.state.setdefault(self.CODE, {})[plan.key] = plan
        return updated

    def finalize(self, module: cst.Module, fixer) -> cst.Module:
        plans = fixer.state.get(self.CODE)
        if not plans:
            return module
        splitter = _Splitter(plans)
        new_module = MetadataWrapper(module, unsafe_skip_copy=True).visit(splitter)
        if not splitter.done:
            raise ValueError(f"no function at {sorted(plans)}")
        # A plan deferred because a function inside it was split is found again next pass.
        return new_module


# Finding the traced functions ---------------------------------------------------------


def _public(qualified: str | None) -> str | None:
    if qualified is None:
        return None
    for private, public in _PRIVATE_PREFIXES:
        if qualified.startswith(private):
            return public + qualified[len(private) :]
    return qualified


def _transform_of(
    ctx: FileContext, expr: ast.AST, aliases: frozenset[str]
) -> tuple[str, list[ast.keyword]] | None:
    """(transform, options) for `jax.jit`, `jax.jit(**options)` and `partial(jax.jit, **options)`."""
    if not _may_name_transform(expr.func if isinstance(expr, ast.Call) else expr, aliases):
        return None
    if isinstance(expr, ast.Call):
        head = _public(ctx.qualname(expr.func))
        if head == PARTIAL and expr.args:
            inner = _public(ctx.qualname(expr.args[0]))
            if inner == JIT or inner in REPORT_TRANSFORMS:
                return inner, expr.keywords
            return None
        if head == JIT and not expr.args:
            return head, expr.keywords
        return None
    name = _public(ctx.qualname(expr))
    if name == JIT or name in REPORT_TRANSFORMS:
        return name, []
    return None


def _matching_lines(text: str, marks: tuple[str, ...]) -> set[int]:
    positions = []
    for mark in marks:
        position = text.find(mark)
        while position != -1:
            positions.append(position)
            position = text.find(mark, position + 1)
    lines, line, previous = set(), 1, 0
    for position in sorted(positions):
        line += FileContext.count_line_breaks(text, previous, position)
        previous = position
        lines.add(line)
    return lines


class _Region:
    """The nodes whose line range covers a candidate line, with their parents."""

    def __init__(self, tree: ast.Module, lines: list[int]) -> None:
        self.parents: dict[ast.AST, ast.AST] = {}
        self.nodes: list[ast.AST] = []
        stack: list[ast.AST] = [tree]
        while stack:
            node = stack.pop()
            self.nodes.append(node)
            for child in ast.iter_child_nodes(node):
                if not child._fields:
                    continue  # contexts and operators: shared, and never interesting
                start = getattr(child, "lineno", None)
                if start is None or _covers(lines, start, child.end_lineno):
                    self.parents[child] = node
                    stack.append(child)

    def scope_of(self, node: ast.AST) -> ast.AST | None:
        """The function (or None: the module) whose body holds ``node``."""
        current = self.parents.get(node)
        while current is not None and not isinstance(
            current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
        ):
            current = self.parents.get(current)
        return current


def _covers(lines: list[int], start: int, end: int) -> bool:
    index = bisect.bisect_left(lines, start)
    return index < len(lines) and lines[index] <= end


def _may_name_transform(expr: ast.AST, aliases: frozenset[str]) -> bool:
    """A spelling check that spares resolving names that cannot be a transform."""
    if isinstance(expr, ast.Attribute):
        return expr.attr in _TRANSFORM_NAMES
    return isinstance(expr, ast.Name) and (expr.id in _TRANSFORM_NAMES or expr.id in aliases)


def _traced_functions(ctx: FileContext, region: _Region) -> list[Traced]:
    found: dict[ast.AST, Traced] = {}
    aliases = frozenset(name for pair in _ALIAS.findall(ctx.text) for name in pair if name)
    for node in region.nodes:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for decorator in node.decorator_list:
                transform = _transform_of(ctx, decorator, aliases)
                if transform is not None:
                    name, options = transform
                    why = None
                    if len(node.decorator_list) > 1:
                        why = "the function has other decorators"
                    elif isinstance(node, ast.AsyncFunctionDef):
                        why = "the function is async"
                    _add(found, node, name, options, unsplittable=why)
        elif isinstance(node, ast.Call) and node.args and _may_name_transform(node.func, aliases):
            name = _public(ctx.qualname(node.func))
            if name == JIT:
                positions: tuple[int, ...] = (0,)
            elif name in REPORT_TRANSFORMS:
                positions = REPORT_TRANSFORMS[name][0]
            else:
                continue
            for position in positions:
                if position < len(node.args):
                    for function in _functions_passed(region, node, node.args[position]):
                        _add(found, function, name, node.keywords, unsplittable=_BY_CALL)
    return [traced for traced in found.values() if traced.traced]


def _functions_passed(region: _Region, call: ast.Call, argument: ast.AST) -> list[ast.AST]:
    if isinstance(argument, ast.Lambda):
        return [argument]
    if isinstance(argument, (ast.List, ast.Tuple)):  # lax.switch branches
        return [f for element in argument.elts for f in _functions_passed(region, call, element)]
    if not isinstance(argument, ast.Name):
        return []
    # Only functions holding an access matter, and those are in the region. The name
    # resolves like a closure: the call's own scope first, then the enclosing ones.
    definitions = [
        node
        for node in region.nodes
        if isinstance(node, ast.FunctionDef)
        and node.name == argument.id
        and not node.decorator_list
        and not isinstance(region.parents.get(node), ast.ClassDef)
    ]
    scope = region.scope_of(call)
    while definitions:
        here = [node for node in definitions if region.scope_of(node) is scope]
        if here or scope is None or argument.id in _stored_names(scope):
            return here
        scope = region.scope_of(scope)
    return []


def _add(found: dict, function, transform: str, options: list[ast.keyword], unsplittable):
    params = _positional_params(function)
    everything = {arg.arg for arg in _all_params(function)}
    if transform == JIT:
        static = _argument_names(options, "static_argnums", "static_argnames", params)
        if static is not None and function.args.vararg and _indexes_past(options, "static_argnums", params):
            static.add(function.args.vararg.arg)  # some of *args are static: treat them all so
        donated = _argument_names(options, "donate_argnums", "donate_argnames", params)
        if static is None or donated is None or any(k.arg is None for k in options):
            return  # options we cannot read: which arguments are static is unknown
        traced_names, donated_names = frozenset(everything - static), frozenset(donated)
    else:
        traced_names = _transformed_params(transform, options, params, everything)
        if traced_names is None:
            return
        donated_names = frozenset()
    previous = found.get(function)
    if previous is not None:
        previous.unsplittable = previous.unsplittable or "the function is traced more than once"
        previous.traced = previous.traced | traced_names
        if previous.transform == JIT:
            previous.transform = transform
        return
    found[function] = Traced(function, transform, traced_names, donated_names, unsplittable)


def _transformed_params(transform: str, options, params: list[str], everything: set[str]) -> frozenset | None:
    traced = _traced_positions(transform, options, params, everything)
    static = _argument_names(options, "static_argnums", "static_argnames", params)
    broadcast = _argument_names(options, "static_broadcasted_argnums", None, params)
    if traced is None or static is None or broadcast is None:
        return None
    return traced - static - broadcast


def _traced_positions(transform: str, options, params: list[str], everything: set[str]) -> frozenset | None:
    option = REPORT_TRANSFORMS[transform][1]
    value = next((k.value for k in options if k.arg == option), None) if option else None
    if any(k.arg is None for k in options):
        return None
    if value is None:
        if option == "argnums":
            return frozenset(params[:1])
        return frozenset(everything)
    if option == "argnums":
        positions = _int_literals(value)
        if positions is None:
            return None
        return frozenset(params[i] for i in positions if -len(params) <= i < len(params))
    # in_axes: an int maps every positional argument; a tuple/list maps them one by one.
    if isinstance(value, ast.Constant) and isinstance(value.value, int):
        return frozenset(everything)
    if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(params):
        return frozenset(
            name
            for name, axis in zip(params, value.elts)
            if not (isinstance(axis, ast.Constant) and axis.value is None)
        )
    return None


def _argument_names(options, nums_key: str, names_key: str | None, params: list[str]) -> set[str] | None:
    """The parameters named by an `*_argnums` / `*_argnames` pair; None when not literals."""
    names: set[str] = set()
    for keyword in options:
        if keyword.arg == nums_key:
            positions = _int_literals(keyword.value)
            if positions is None:
                return None
            names.update(params[i] for i in positions if -len(params) <= i < len(params))
        elif names_key is not None and keyword.arg == names_key:
            strings = _str_literals(keyword.value)
            if strings is None:
                return None
            names.update(strings)
    return names


def _indexes_past(options, key: str, params: list[str]) -> bool:
    keyword = next((k for k in options if k.arg == key), None)
    return keyword is not None and any(i >= len(params) for i in _int_literals(keyword.value) or ())


def _int_literals(value: ast.AST) -> list[int] | None:
    """The ints of `1`, `-1`, `(0, 2)` or `None`; None when they are not literals."""
    if isinstance(value, ast.Constant) and value.value is None:
        return []
    items = value.elts if isinstance(value, (ast.Tuple, ast.List)) else [value]
    out = []
    for item in items:
        sign = 1
        if isinstance(item, ast.UnaryOp) and isinstance(item.op, ast.USub):
            sign, item = -1, item.operand
        if not (isinstance(item, ast.Constant) and type(item.value) is int):
            return None
        out.append(sign * item.value)
    return out


def _str_literals(value: ast.AST) -> list[str] | None:
    if isinstance(value, ast.Constant) and value.value is None:
        return []
    items = value.elts if isinstance(value, (ast.Tuple, ast.List)) else [value]
    if not all(isinstance(i, ast.Constant) and isinstance(i.value, str) for i in items):
        return None
    return [i.value for i in items]


def _positional_params(function) -> list[str]:
    return [a.arg for a in (*function.args.posonlyargs, *function.args.args)]


def _all_params(function) -> list[ast.arg]:
    args = function.args
    extra = [a for a in (args.vararg, args.kwarg) if a is not None]
    return [*args.posonlyargs, *args.args, *args.kwonlyargs, *extra]


# Finding the accesses -------------------------------------------------------------


def _scope_nodes(scope: ast.AST):
    """Nodes of ``scope``'s own body, not of the functions or classes nested in it."""
    stack = list(scope.body) if isinstance(scope.body, list) else [scope.body]
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, _SCOPES):
            stack.extend(ast.iter_child_nodes(node))


def _stored_names(function) -> set[str]:
    return {
        node.id
        for node in _scope_nodes(function)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
    }


def _accesses(ctx: FileContext, traced: Traced) -> list[Access]:
    function = traced.node
    stored = _stored_names(function)
    params = {name for name in traced.traced if name not in stored}
    aliases = _comprehension_aliases(function, params)
    tainted = _tainted_names(ctx, function, traced.traced)
    nodes = list(_scope_nodes(function))
    called = {id(node.func) for node in nodes if isinstance(node, ast.Call)}
    found = []
    for node in nodes:
        access = _as_access(ctx, node, called)
        if access is None:
            continue
        receiver, label = access
        root = _param_root(receiver)
        if root in params or root in aliases:
            found.append(Access(node, receiver, label, aliases.get(root, root)))
        elif _is_traced(ctx, receiver, tainted):
            found.append(Access(node, receiver, label, None))
    return sorted(found, key=lambda a: (a.node.lineno, a.node.col_offset))


def _as_access(ctx: FileContext, node: ast.AST, called: set[int] = frozenset()) -> tuple[ast.AST, str] | None:
    """(receiver, label) when ``node`` is a concrete-only access; ``called``: ids of called expressions."""
    if isinstance(node, ast.Call):
        func = node.func
        if (
            isinstance(func, ast.Attribute)
            and METHODS.get(func.attr) == len(node.args)
            and not any(isinstance(a, ast.Starred) for a in node.args)
            and (func.attr == "__dlpack__" or not node.keywords)
        ):
            return func.value, f".{func.attr}()"
        if node.args and not isinstance(node.args[0], ast.Starred) and ctx.qualname(func) in CONSUMERS:
            return node.args[0], f"{ast.unparse(func)}()"
        return None
    if (
        isinstance(node, ast.Attribute)
        and node.attr in PROPERTIES
        and isinstance(node.ctx, ast.Load)
        and id(node) not in called
    ):
        return node.value, f".{node.attr}"
    return None


def _param_root(expr: ast.AST) -> str | None:
    """The name an access chain (`x`, `x.buf`, `xs[0]`) starts from; None for anything else."""
    while isinstance(expr, (ast.Attribute, ast.Subscript)):
        if isinstance(expr, ast.Attribute) and expr.attr in STATIC_ATTRS:
            return None
        expr = expr.value
    return expr.id if isinstance(expr, ast.Name) else None


def _comprehension_aliases(function, params: set[str]) -> dict[str, str]:
    aliases = {}
    for node in _scope_nodes(function):
        if isinstance(node, ast.comprehension) and isinstance(node.target, ast.Name):
            root = _param_root(node.iter)
            if root in params:
                aliases[node.target.id] = root
    return aliases


def _tainted_names(ctx: FileContext, function, traced: frozenset[str]) -> set[str]:
    """Parameters that are tracers and the locals computed from them or from jax calls."""
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
            if _is_traced(ctx, value, tainted):
                for target in targets:
                    for name in ast.walk(target):
                        if isinstance(name, ast.Name) and name.id not in tainted:
                            tainted.add(name.id)
                            changed = True
    return tainted


def _is_traced(ctx: FileContext, expr: ast.AST, tainted: set[str]) -> bool:
    """Whether ``expr`` is certainly a tracer; unknown calls count as concrete (precision first)."""
    if isinstance(expr, ast.Name):
        return expr.id in tainted
    if isinstance(expr, ast.Attribute):
        # A concrete-only property is reported where it is read; its value is concrete.
        if expr.attr in STATIC_ATTRS or expr.attr in PROPERTIES:
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
    hoisted, reason = _hoisted_statements(function, body, seeds)
    if not reason:
        static = {a.arg for a in _all_params(function)} - traced.traced
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
    )
    return plan, fix, None


def _is_docstring(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


def _hoisted_statements(function, body: list[ast.stmt], seeds: dict[int, ast.stmt]):
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
        if id(statement) not in seeds:
            return [], "its value flows into the traced computation"
        return [], "it is inside a compound statement"
    return hoisted, None


def _dependency_problem(ctx: FileContext, function, body, hoisted, static: set[str]):
    """(reason, copies): why the hoisted statements cannot run before the trace, or the
    static statements (`n = x.shape[0]`) they need copied into the wrapper."""
    params = {a.arg for a in _all_params(function)}
    local = _stored_names(function) | {
        node.name for node in _scope_nodes(function) if isinstance(node, (ast.FunctionDef, ast.ClassDef))
    }
    hoisted_names: set[str] = set()
    copies: list[ast.stmt] = []
    for statement in hoisted:
        if any(isinstance(node, _UNSPLITTABLE) for node in ast.walk(statement)):
            return "it assigns or yields inside an expression", []
        for name in sorted(_reads(statement) - params - hoisted_names):
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
            bound |= {a.arg for a in _all_params(node)}
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
    jitted_attribute = re.search(
        rf"\b{re.escape(function.name)}\s*\.\s*({'|'.join(JITTED_ATTRS)})\b", ctx.text
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


def _message(traced: Traced, access: Access, fix: FixSafety, reason: str | None) -> str:
    receiver = ast.unparse(access.receiver)
    if access.label.startswith("."):
        what = f"`{receiver}{access.label}` needs a concrete array"
    else:
        what = f"`{access.label[:-1]}{receiver})` needs a concrete array"
    where = f"inside `{traced.transform}`"
    if access.param is None:
        return (
            f"{what}, but `{receiver}` is computed {where}; call it on the concrete result after the "
            "transformed function returns, or use `jax.dlpack` / `jax.Array.__dlpack__` on that result"
        )
    head = f"{what}, but `{access.param}` is a tracer {where}"
    if fix is not FixSafety.NONE:
        return f"{head}; hoist the access out of the trace: run it on the concrete argument before the jitted call"
    if access.label == ".delete()":
        return f"{head}; delete the array after the jitted call returns, or donate it with `donate_argnums`"
    if traced.transform != JIT:
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


class _Splitter(cst.CSTTransformer):
    """Replaces each planned function by its traced body and a plain wrapper."""

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
        plan = self.plans.pop((start.line, start.column), None)
        if plan is None:
            return updated
        lines = [self.get_metadata(PositionProvider, s).start.line for s in original.body.body]
        if len(lines) != len(updated.body.body):
            return updated  # a function nested in it was just split; the engine's next pass does this one
        self.done += 1
        kept, moved, docstring = [], [], []
        for line, statement in zip(lines, updated.body.body):
            if line == plan.docstring_line:
                docstring.append(statement)
            elif line in plan.hoisted_lines:
                moved.append(statement)
            elif line in plan.copied_lines:
                moved.append(statement)
                kept.append(statement)
            else:
                kept.append(statement)
        kept[0] = _without_leading_blanks(kept[0])
        moved = [*docstring, *moved]
        moved[0] = _without_leading_blanks(moved[0])
        traced = updated.with_changes(
            name=cst.Name(plan.traced_name), body=updated.body.with_changes(body=kept)
        )
        returned = cst.parse_statement(f"return {plan.call}\n")
        wrapper = updated.with_changes(
            decorators=[],
            leading_lines=[cst.EmptyLine(indent=False)] * (1 if self.depth else 2),
            lines_after_decorators=[],
            body=updated.body.with_changes(
                body=[*moved, returned], header=cst.TrailingWhitespace(), footer=[]
            ),
        )
        return cst.FlattenSentinel([traced, wrapper])


def _without_leading_blanks(statement):
    lines = list(statement.leading_lines)
    while lines and lines[0].comment is None:
        lines.pop(0)
    return statement.with_changes(leading_lines=lines)
