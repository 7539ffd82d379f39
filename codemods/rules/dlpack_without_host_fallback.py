"""JAX004: DLPack exports of JAX arrays with no host-memory fallback."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from jax_codemod.analysis import api
from jax_codemod.analysis import values as v
from jax_codemod.analysis.context import FileContext
from jax_codemod.analysis.scopes import walk
from jax_codemod.rule import Finding, FixSafety, Rule
from jax_codemod.rules._shared import (
    NUMPY_ALIASES,
    TAKEN,
    helper_state,
    insert_helper,
    is_guarded,
    numpy_name,
    shadowed_names,
    try_except_buffer_error,
    whole_statement,
    with_value,
)

if TYPE_CHECKING:
    import libcst as cst

# Consumer -> the same library's constructor, which takes the host (NumPy) copy.
HOST_CONSTRUCTORS: dict[str, str] = api.table("host_constructor")

# Fix shapes, carried in Finding.data[0].
STATEMENT = "statement"
HELPER = "helper"

HELPER_NAME = "_from_dlpack_or_host"
HELPER_SOURCE = f'''
def {HELPER_NAME}(from_dlpack, from_host, array):
    """Zero-copy DLPack export, or a host copy on backends without DLPack support."""
    try:
        return from_dlpack(array)
    except BufferError:
        return from_host(NUMPY.array(array))
'''
_FALLBACK_COMMENT = "# no DLPack on this backend: copy through host memory"


class DlpackWithoutHostFallback(Rule):
    """## What it does
    Finds DLPack exports of JAX arrays to PyTorch, NumPy and CuPy
    (`torch.from_dlpack(x)`, `torch.utils.dlpack.from_dlpack(x)`, `np.from_dlpack(x)`,
    `cupy.from_dlpack(x)`) that have no fallback for backends without DLPack support,
    and adds one: try the zero-copy export, and on `BufferError` copy through host
    memory with the consumer's own constructor. Opt-in: enable it for code that must
    also run on plugin backends.

    ## Why is this bad?
    On a backend without DLPack support (plugin backends such as Metal) every export
    raises `BufferError: __dlpack__ device only supported for CPU, GPU and TPU pinned
    host, got platform: ...`. A copy through host memory works on every backend.

    ## Example
    ```python
    import jax.numpy as jnp
    import torch

    x = jnp.arange(6.0)
    t = torch.from_dlpack(x)
    total = torch.from_dlpack(x).sum()
    ```

    ## Use instead
    ```python
    import jax.numpy as jnp
    import torch
    import numpy as np


    def _from_dlpack_or_host(from_dlpack, from_host, array):
        \"\"\"Zero-copy DLPack export, or a host copy on backends without DLPack support.\"\"\"
        try:
            return from_dlpack(array)
        except BufferError:
            return from_host(np.array(array))


    x = jnp.arange(6.0)
    try:
        t = torch.from_dlpack(x)
    except BufferError:  # no DLPack on this backend: copy through host memory
        t = torch.as_tensor(np.array(x))
    total = _from_dlpack_or_host(torch.from_dlpack, torch.as_tensor, x).sum()
    ```

    ## Fix safety
    Safe: behaviour changes only where the export raised `BufferError`, and there the
    fallback returns the same values and dtype in the same library's type. A whole
    statement is wrapped in `try`/`except BufferError`; an export inside a larger
    expression goes through one helper per module. Know what the fallback trades:
    it copies (device to host, host to the consumer), so the result no longer shares
    memory with the JAX array; it is a fresh writable copy (`np.array`), never a view of
    JAX's cached host value, which PyTorch warns about and must not be written to. The
    `except BufferError` also catches the other `BufferError`s of an export (a sharded
    array, an unsupported dtype) and answers them with a copy instead of an error. The
    array is evaluated once: a statement is wrapped only when its argument is names,
    attributes, subscripts by constants, operators and a JAX array's pure methods
    (`x.astype("float32")`), which the fallback may repeat; an argument that calls anything
    else (`env.step(a)`) goes through the helper. `bfloat16` and
    other dtypes PyTorch cannot build from NumPy still fail in the fallback. Only
    arguments known to be JAX arrays are touched (results of `jax.numpy`, `jax.random`,
    `jax.device_put`, ..., names assigned only such values, parameters annotated
    `jax.Array`); exports already inside `try`/`except BufferError` are left alone, and
    calls with extra arguments (`device=`, `copy=`) are reported without a fix.
    """

    CODE = "JAX004"
    RAISES = ("BufferError",)
    NAME = "dlpack-without-host-fallback"
    DEFAULT_ENABLED = False
    FIX_SAFETY = FixSafety.SAFE
    TRIGGERS = (b"from_dlpack",)
    REQUIRES = (b"jax",)  # prefilter() below: an argument known to be a JAX array needs jax named

    def prefilter(self, source: bytes) -> bool:
        # A finding needs a consumer of torch, numpy or cupy, and an argument known to be a
        # JAX array, which the value analysis knows only from a name that resolves into jax.
        return (
            b"from_dlpack" in source
            and b"jax" in source
            and (b"torch" in source or b"numpy" in source or b"cupy" in source)
        )

    def check(self, ctx: FileContext) -> list[Finding]:
        findings: list[Finding] = []
        analysis = ctx.analysis
        helper = helper_state(ctx, HELPER_NAME, HELPER_SOURCE)
        calls, aliases = _consumer_calls(ctx.tree)
        for node in calls:
            if isinstance(node.func, ast.Name) and node.func.id not in aliases:
                continue  # a builtin, a def or class, or an import of something else
            consumer = analysis.qualname(node.func)
            if consumer not in HOST_CONSTRUCTORS:
                continue
            if analysis.value_of(exported_array(node.args[0])).kind != v.ARRAY or is_guarded(ctx, node):
                continue
            if _runs_only_on_dlpack_platforms(ctx, node):
                continue
            findings.append(self._finding(ctx, node, consumer, helper))
        return findings

    def _finding(self, ctx: FileContext, call: ast.Call, consumer: str, helper: str) -> Finding:
        message = (
            f"`{ctx.source_of(call.func)}` of a JAX array raises BufferError on backends without DLPack support "
            "(plugin backends such as Metal)"
        )
        if len(call.args) != 1 or call.keywords or isinstance(call.args[0], ast.Starred):
            return self.finding(
                ctx,
                call,
                f"{message}; its extra arguments have no host-copy equivalent: add a "
                "`except BufferError` fallback through `np.array(x)` by hand",
                FixSafety.NONE,
            )
        advice = f"{message}; on BufferError, copy through host memory"
        # The wrapped statement's fallback evaluates the array again: only an expression that
        # gives the same value without effects (`x`, `self.state`, `batch["obs"]`) may be
        # repeated; `env.step(a)` or `jnp.asarray(queue.pop())` goes through the helper, once.
        statement = whole_statement(ctx, call) if _repeatable(exported_array(call.args[0])) else None
        if statement is not None:
            return self.finding(
                ctx,
                statement,
                advice,
                FixSafety.SAFE,
                node_type="SimpleStatementLine",
                data=(STATEMENT, consumer, _numpy_shadowed(ctx, call)),
            )
        if helper == TAKEN:
            return self.finding(
                ctx,
                call,
                f"{message}; `{HELPER_NAME}` is already taken in this module, so add the "
                "`except BufferError` host fallback by hand",
                FixSafety.NONE,
            )
        return self.finding(ctx, call, advice, FixSafety.SAFE, data=(HELPER, consumer))

    def rewrite(self, original, updated, finding: Finding, fixer):
        import libcst as cst

        shape, consumer, *shadowed = finding.data
        numpy = numpy_name(fixer, *shadowed)
        if shape == STATEMENT:
            statement = updated.body[0]
            fallback = _host_copy(statement.value, consumer, numpy, fixer)
            return try_except_buffer_error(updated, with_value(statement, fallback), _FALLBACK_COMMENT)
        fixer.state[HELPER_NAME] = numpy
        constructor = cst.parse_expression(_constructor_code(consumer, numpy, fixer))
        args = [updated.func, constructor, _array_of(updated)]
        return cst.Call(
            func=cst.Name(HELPER_NAME),
            args=[cst.Arg(value=value) for value in args],
            lpar=updated.lpar,
            rpar=updated.rpar,
        )

    def finalize(self, module: cst.Module, fixer) -> cst.Module:
        numpy = fixer.state.get(HELPER_NAME)
        if numpy is None:
            return module
        return insert_helper(module, HELPER_NAME, HELPER_SOURCE.replace("NUMPY", numpy))


# Backends whose arrays export over DLPack (JAX's test utilities' platform names).
_DLPACK_PLATFORMS = frozenset({"cpu", "gpu", "cuda", "rocm"})
_RUN_ON_DEVICES = frozenset({"jax._src.test_util.run_on_devices", "jax.test_util.run_on_devices"})
_DEVICE_MATCHES = frozenset({"jax._src.test_util.test_device_matches", "jax.test_util.test_device_matches"})


def _runs_only_on_dlpack_platforms(ctx: FileContext, call: ast.Call) -> bool:
    """A test that runs only where DLPack works (issue 31, JAX's own test suite):
    ``@jtu.run_on_devices("cpu")`` on it or its class, or a ``setUp`` / the test itself that
    starts with ``if not jtu.test_device_matches(["cpu", "gpu"]): self.skipTest(...)``."""
    for ancestor in ctx.ancestors(call):
        if not isinstance(ancestor, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if any(_platforms(ctx, d, _RUN_ON_DEVICES) for d in ancestor.decorator_list):
            return True
        if isinstance(ancestor, ast.ClassDef):
            bodies = [s.body for s in ancestor.body if isinstance(s, ast.FunctionDef) and s.name in ("setUp", "setUpClass")]
        else:
            bodies = [[s for s in ancestor.body if s.end_lineno < call.lineno]]
        if any(_skips_elsewhere(ctx, statement) for body in bodies for statement in body):
            return True
    return False


def _platforms(ctx: FileContext, node: ast.AST, functions: frozenset[str]) -> bool:
    """``node`` is a call of one of ``functions`` naming only DLPack platforms."""
    if not (isinstance(node, ast.Call) and node.args and ctx.qualname(node.func) in functions):
        return False
    names = node.args[0].elts if isinstance(node.args[0], (ast.List, ast.Tuple)) else node.args
    return all(isinstance(n, ast.Constant) and n.value in _DLPACK_PLATFORMS for n in names)


def _skips_elsewhere(ctx: FileContext, statement: ast.stmt) -> bool:
    """``if not jtu.test_device_matches([...]): self.skipTest(...)`` (or ``raise``)."""
    if not (isinstance(statement, ast.If) and isinstance(statement.test, ast.UnaryOp)):
        return False
    if not isinstance(statement.test.op, ast.Not) or not _platforms(ctx, statement.test.operand, _DEVICE_MATCHES):
        return False
    last = statement.body[-1]
    skips = isinstance(last, ast.Expr) and isinstance(last.value, ast.Call) and isinstance(last.value.func, ast.Attribute)
    return isinstance(last, ast.Raise) or (skips and last.value.func.attr == "skipTest")


def _consumer_calls(tree: ast.Module) -> tuple[list[ast.Call], frozenset[str]]:
    """The calls that may be a consumer (``f(x, ...)``, ``m.from_dlpack(x, ...)``), in ``ast.walk``
    order, and the names a bare ``f`` may be for one to be.

    Resolving the callee of every bare call of a large module is most of this rule's cost. A
    name can resolve to ``torch.from_dlpack`` & co. only through a binding that names a
    ``from_dlpack`` import or is not an import, ``def`` or ``class`` at all (an assignment, a
    parameter, a loop or ``with`` target...): a name only ever bound by other imports, defs and
    classes (or never bound: a builtin) resolves to something else.
    """
    calls: list[ast.Call] = []
    aliases: set[str] = set()
    for node in walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if node.args and (
                isinstance(func, ast.Name) or (isinstance(func, ast.Attribute) and func.attr == "from_dlpack")
            ):
                calls.append(node)
        elif isinstance(node, ast.Name):
            if not isinstance(node.ctx, ast.Load):
                aliases.add(node.id)
        elif isinstance(node, ast.arg):
            aliases.add(node.arg)
        elif isinstance(node, ast.alias):
            if "from_dlpack" in node.name:
                aliases.add((node.asname or node.name).split(".", 1)[0])
        elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)):
            if node.name:
                aliases.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            aliases.add(node.rest)
    return calls, frozenset(aliases)


def _numpy_shadowed(ctx: FileContext, call: ast.Call) -> frozenset[str]:
    """The spellings of numpy the function around ``call`` binds to something else."""
    spellings = {
        (alias.asname or alias.name).split(".", 1)[0]
        for node in ctx.tree.body
        if isinstance(node, ast.Import)
        for alias in node.names
        if alias.name.split(".", 1)[0] == "numpy"
    }
    return shadowed_names(ctx, call, spellings | set(NUMPY_ALIASES))


def _host_copy(call: cst.Call, consumer: str, numpy: str, fixer) -> cst.BaseExpression:
    import libcst as cst

    host = f"{numpy}.array({code_of(_array_of(call))})"
    if HOST_CONSTRUCTORS[consumer].startswith("numpy."):
        return cst.parse_expression(host)
    return cst.parse_expression(f"{_constructor_code(consumer, numpy, fixer)}({host})")


def _constructor_code(consumer: str, numpy: str, fixer) -> str:
    constructor = HOST_CONSTRUCTORS[consumer]
    if constructor.startswith("numpy."):
        return numpy + constructor[len("numpy") :]
    return fixer.reference_code(constructor)


def _array_of(consumer_call: cst.Call) -> cst.BaseExpression:
    """The exported array: ``x`` for both ``f(x)`` and ``f(x.__dlpack__())``."""
    import libcst as cst

    array = consumer_call.args[0].value
    if (
        isinstance(array, cst.Call)
        and isinstance(array.func, cst.Attribute)
        and array.func.attr.value == "__dlpack__"
        and not array.args
    ):
        return array.func.value
    return array


def _repeatable(expr: ast.AST) -> bool:
    """Names, attributes, subscripts by constants or names, and operators over them: evaluated
    twice, the same value and no effect (a property or operator with effects is not guarded)."""
    if isinstance(expr, (ast.Name, ast.Constant)):
        return True
    if isinstance(expr, ast.Attribute):
        return _repeatable(expr.value)
    if isinstance(expr, ast.Subscript):
        index = expr.slice
        parts = index.elts if isinstance(index, ast.Tuple) else [index]
        return all(isinstance(part, (ast.Name, ast.Constant)) for part in parts) and _repeatable(expr.value)
    if isinstance(expr, ast.BinOp):
        return _repeatable(expr.left) and _repeatable(expr.right)
    if isinstance(expr, ast.UnaryOp):
        return _repeatable(expr.operand)
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in _PURE_METHODS:
        # Only arrays known to be JAX's get here, and a JAX array's `astype` & co. are pure.
        return _repeatable(expr.func.value) and all(
            _repeatable(a) for a in [*expr.args, *(k.value for k in expr.keywords)]
        )
    return False


_PURE_METHODS = frozenset({"astype", "reshape", "transpose", "ravel", "flatten", "squeeze", "view"})


def exported_array(argument: ast.AST) -> ast.AST:
    """The array behind a consumer's argument: ``x`` for both ``x`` and ``x.__dlpack__()``."""
    if (
        isinstance(argument, ast.Call)
        and isinstance(argument.func, ast.Attribute)
        and argument.func.attr == "__dlpack__"
        and not argument.args
        and not argument.keywords
    ):
        return argument.func.value
    return argument


def code_of(node: cst.CSTNode) -> str:
    import libcst as cst

    return cst.Module(body=[]).code_for_node(node)
