"""JAX004: DLPack exports of JAX arrays with no host-memory fallback.

Also home of the small analyses JAX003 shares: which expressions are JAX arrays,
which exports are already guarded by ``except BufferError``, and the two fix shapes
(wrap a whole statement in try/except, or route an expression through one helper).
"""

from __future__ import annotations

import ast

import libcst as cst

from codemods.context import FileContext
from codemods.fixer import insert_after_preamble
from codemods.rule import Finding, FixSafety, Rule

# Consumer -> the same library's constructor, which takes the host (NumPy) copy.
HOST_CONSTRUCTORS = {
    "torch.from_dlpack": "torch.as_tensor",
    "torch.utils.dlpack.from_dlpack": "torch.as_tensor",
    "numpy.from_dlpack": "numpy.asarray",
    "cupy.from_dlpack": "cupy.asarray",
}

# jax.* callables whose result is a jax.Array. jax.device_get returns NumPy arrays, and
# most of the rest of the namespace returns functions, pytrees or devices.
_JAX_ARRAY_NAMESPACES = ("jax.numpy.", "jax.random.", "jax.lax.", "jax.nn.", "jax.scipy.")
_JAX_ARRAY_FUNCTIONS = frozenset({"jax.device_put", "jax.block_until_ready", "jax.make_array_from_callback"})
_JAX_TRANSFORMS = frozenset({"jax.jit", "jax.pmap"})
# Annotations that promise a jax.Array (ArrayLike does not: it admits NumPy arrays and scalars).
_JAX_ARRAY_TYPES = frozenset({"jax.Array", "jax.numpy.ndarray"})
_OTHER_NAMESPACES = ("torch.", "numpy.", "cupy.", "tensorflow.")
# Methods and attributes of a jax.Array that give a jax.Array back.
_ARRAY_METHODS = frozenset(
    {
        "astype",
        "reshape",
        "transpose",
        "ravel",
        "flatten",
        "squeeze",
        "swapaxes",
        "copy",
        "sum",
        "mean",
        "max",
        "min",
        "prod",
        "cumsum",
        "clip",
        "round",
        "conj",
        "dot",
        "block_until_ready",
        "__getitem__",
    }
)
_ARRAY_ATTRIBUTES = frozenset({"T", "mT", "real", "imag"})
_CATCHES_BUFFER_ERROR = frozenset({"BufferError", "Exception", "BaseException"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)

JAX = "jax"
OTHER = "other"

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
    array, an unsupported dtype) and answers them with a copy instead of an error; the
    argument expression is evaluated a second time on the fallback path. `bfloat16` and
    other dtypes PyTorch cannot build from NumPy still fail in the fallback. Only
    arguments known to be JAX arrays are touched (results of `jax.numpy`, `jax.random`,
    `jax.device_put`, ..., names assigned only such values, parameters annotated
    `jax.Array`); exports already inside `try`/`except BufferError` are left alone, and
    calls with extra arguments (`device=`, `copy=`) are reported without a fix.
    """

    CODE = "JAX004"
    NAME = "dlpack-without-host-fallback"
    DEFAULT_ENABLED = False
    FIX_SAFETY = FixSafety.SAFE
    TRIGGERS = (b"from_dlpack",)

    def check(self, ctx: FileContext) -> list[Finding]:
        findings: list[Finding] = []
        origins = ArrayOrigins(ctx)
        helper = helper_state(ctx, HELPER_NAME, HELPER_SOURCE)
        for node in ast.walk(ctx.tree):
            if not isinstance(node, ast.Call):
                continue
            consumer = ctx.qualname(node.func)
            if consumer not in HOST_CONSTRUCTORS or not node.args or origins.shadowed(node.func):
                continue
            array = exported_array(node.args[0])
            if origins.of(array) != JAX or is_guarded(ctx, node):
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
        statement = whole_statement(ctx, call)
        if statement is not None:
            return self.finding(
                ctx,
                statement,
                advice,
                FixSafety.SAFE,
                node_type="SimpleStatementLine",
                data=(STATEMENT, consumer),
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
        shape, consumer = finding.data
        numpy = numpy_name(fixer)
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


def _host_copy(call: cst.Call, consumer: str, numpy: str, fixer) -> cst.BaseExpression:
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
    array = consumer_call.args[0].value
    if (
        isinstance(array, cst.Call)
        and isinstance(array.func, cst.Attribute)
        and array.func.attr.value == "__dlpack__"
        and not array.args
    ):
        return array.func.value
    return array


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


# Which expressions are JAX arrays ----------------------------------------------------


class ArrayOrigins:
    """Where an expression's array comes from: JAX, another library (OTHER), or unknown (None).

    Only local evidence counts: calls into jax's array namespaces, names whose every
    assignment in their scope is such a value, and parameters annotated ``jax.Array``.
    """

    _MAX_DEPTH = 6

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self._bindings: dict[ast.AST, dict[str, list[ast.AST | None]]] = {}

    def of(self, node: ast.AST, depth: int = 0) -> str | None:
        if depth > self._MAX_DEPTH:
            return None
        depth += 1
        if isinstance(node, ast.Call):
            return self._of_call(node, depth)
        if isinstance(node, ast.Name):
            return self._of_name(node, depth)
        if isinstance(node, ast.Attribute) and node.attr in _ARRAY_ATTRIBUTES:
            return self._jax_only(self.of(node.value, depth))
        if isinstance(node, ast.Subscript):
            return self._jax_only(self.of(node.value, depth))
        if isinstance(node, ast.UnaryOp):
            return self._jax_only(self.of(node.operand, depth))
        if isinstance(node, ast.BinOp):
            origins = {self.of(node.left, depth), self.of(node.right, depth)}
            return JAX if JAX in origins and OTHER not in origins else None
        return None

    def shadowed(self, reference: ast.AST) -> bool:
        """Whether the name at the root of ``reference`` is a function's own, not the import."""
        while isinstance(reference, ast.Attribute):
            reference = reference.value
        if not isinstance(reference, ast.Name):
            return True
        for ancestor in self.ctx.ancestors(reference):
            is_function = isinstance(ancestor, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if is_function and reference.id in self._scope_bindings(ancestor):
                return True
        return False

    @staticmethod
    def _jax_only(origin: str | None) -> str | None:
        return origin if origin == JAX else None

    def _of_call(self, call: ast.Call, depth: int) -> str | None:
        qualified = self.ctx.qualname(call.func)
        if qualified:
            if qualified.startswith(_JAX_ARRAY_NAMESPACES) or qualified in _JAX_ARRAY_FUNCTIONS:
                return JAX
            if qualified.startswith(_OTHER_NAMESPACES) or qualified == "jax.device_get":
                return OTHER
            return None
        if isinstance(call.func, ast.Call) and self.ctx.qualname(call.func.func) in _JAX_TRANSFORMS:
            return JAX
        if isinstance(call.func, ast.Attribute) and call.func.attr in _ARRAY_METHODS:
            return self._jax_only(self.of(call.func.value, depth))
        return None

    def _of_name(self, name: ast.Name, depth: int) -> str | None:
        scope = self._scope_binding(name)
        if scope is None:
            return None
        values = self._scope_bindings(scope).get(name.id)
        if not values or any(value is None for value in values):
            return None
        origins = {self._of_binding(value, depth) for value in values}
        return origins.pop() if len(origins) == 1 else None

    def _of_binding(self, value: ast.AST, depth: int) -> str | None:
        if isinstance(value, ast.arg):
            annotation = value.annotation
            return (
                JAX if annotation is not None and self.ctx.qualname(annotation) in _JAX_ARRAY_TYPES else None
            )
        return self.of(value, depth)

    def _scope_binding(self, name: ast.Name) -> ast.AST | None:
        """The function (or module) whose local ``name`` is; None for comprehension and class names."""
        for ancestor in self.ctx.ancestors(name):
            if isinstance(ancestor, _COMPREHENSIONS) and name.id in _comprehension_targets(ancestor):
                return None
            if isinstance(ancestor, ast.ClassDef) and name.id in self._scope_bindings(ancestor):
                return None
            if isinstance(ancestor, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                if name.id in self._scope_bindings(ancestor):
                    return ancestor
                if _declares_global(ancestor, name.id):
                    return self.ctx.tree
        return self.ctx.tree

    def _scope_bindings(self, scope: ast.AST) -> dict[str, list[ast.AST | None]]:
        """Name -> the values bound to it in ``scope``."""
        if scope not in self._bindings:
            self._bindings[scope] = scope_bindings(scope)
        return self._bindings[scope]


def scope_bindings(scope: ast.AST) -> dict[str, list[ast.AST | None]]:
    """Name -> what ``scope`` binds it to: an expression, a parameter (ast.arg), a ClassDef,
    or None where the value is unknowable (loops, imports, functions, unpacking)."""
    found: dict[str, list[ast.AST | None]] = {}

    def bind(target: ast.AST, value: ast.AST | None) -> None:
        if isinstance(target, ast.Name):
            found.setdefault(target.id, []).append(value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                bind(element, None)
        elif isinstance(target, ast.Starred):
            bind(target.value, None)

    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        arguments = scope.args
        for argument in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]:
            found.setdefault(argument.arg, []).append(argument)
        for argument in (arguments.vararg, arguments.kwarg):
            if argument is not None:
                found.setdefault(argument.arg, []).append(None)
    for node in _walk_scope(scope):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                bind(target, node.value)
        elif isinstance(node, ast.AnnAssign):
            bind(node.target, node.value)
        elif isinstance(node, (ast.AugAssign, ast.For, ast.AsyncFor)):
            bind(node.target, None)
        elif isinstance(node, ast.NamedExpr):
            bind(node.target, node.value)
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            bind(node.optional_vars, None)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            found.setdefault(node.name, []).append(None)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                found.setdefault((alias.asname or alias.name).split(".")[0], []).append(None)
        elif isinstance(node, ast.ClassDef) and node is not scope:
            found.setdefault(node.name, []).append(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node is not scope:
            found.setdefault(node.name, []).append(None)
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                bind(target, None)
    return found


def _walk_scope(scope: ast.AST):
    """The nodes of ``scope`` itself, not of the functions, classes and comprehensions in it."""
    body = scope.body if isinstance(scope.body, list) else [scope.body]
    stack = list(reversed(body))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (*_SCOPES, *_COMPREHENSIONS)):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _comprehension_targets(comprehension: ast.AST) -> set[str]:
    return {
        node.id
        for generator in comprehension.generators
        for node in ast.walk(generator.target)
        if isinstance(node, ast.Name)
    }


def _declares_global(function: ast.AST, name: str) -> bool:
    return any(
        isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names for node in _walk_scope(function)
    )


# Guards and statements -----------------------------------------------------------------


def is_guarded(ctx: FileContext, node: ast.AST) -> bool:
    """Whether ``node`` runs in the body of a try whose handlers catch BufferError."""
    child = node
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            return False
        in_try_body = (
            isinstance(ancestor, (ast.Try, getattr(ast, "TryStar", ast.Try))) and child in ancestor.body
        )
        if in_try_body and any(_catches_buffer_error(ctx, handler.type) for handler in ancestor.handlers):
            return True
        child = ancestor
    return False


def _catches_buffer_error(ctx: FileContext, caught: ast.AST | None) -> bool:
    if caught is None:
        return True
    if isinstance(caught, ast.Tuple):
        return any(_catches_buffer_error(ctx, element) for element in caught.elts)
    if isinstance(caught, ast.Name):
        return caught.id in _CATCHES_BUFFER_ERROR and not ctx.is_bound(caught.id)
    return ctx.qualname(caught) in {f"builtins.{name}" for name in _CATCHES_BUFFER_ERROR}


def whole_statement(ctx: FileContext, call: ast.Call) -> ast.stmt | None:
    """The statement ``call`` is the whole value of, when it sits alone on its lines."""
    statement = ctx.parent(call)
    if (
        not isinstance(statement, (ast.Assign, ast.AnnAssign, ast.Return, ast.Expr))
        or statement.value is not call
    ):
        return None
    first = ctx.lines[statement.lineno - 1]
    last = ctx.lines[statement.end_lineno - 1]
    before = first.encode("utf-8")[: statement.col_offset].decode("utf-8", errors="replace")
    after = last.encode("utf-8")[statement.end_col_offset :].decode("utf-8", errors="replace").strip()
    if before.strip() or (after and not after.startswith("#")):
        return None
    return statement


def try_except_buffer_error(
    line: cst.SimpleStatementLine, fallback: cst.BaseSmallStatement, why: str
) -> cst.Try:
    """``try: <line> except BufferError: <fallback>``, keeping the line's comments in place."""
    handler_header = cst.TrailingWhitespace(whitespace=cst.SimpleWhitespace("  "), comment=cst.Comment(why))
    return cst.Try(
        body=cst.IndentedBlock(body=[line.with_changes(leading_lines=[])]),
        handlers=[
            cst.ExceptHandler(
                type=cst.Name("BufferError"),
                body=cst.IndentedBlock(
                    body=[cst.SimpleStatementLine(body=[fallback])], header=handler_header
                ),
            )
        ],
        leading_lines=line.leading_lines,
    )


def with_value(statement: cst.BaseSmallStatement, value: cst.BaseExpression) -> cst.BaseSmallStatement:
    """``statement`` computing ``value`` instead; an annotated target is annotated once, in the try."""
    if isinstance(statement, cst.AnnAssign):
        return cst.Assign(targets=[cst.AssignTarget(target=statement.target)], value=value)
    return statement.with_changes(value=value)


def code_of(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


# Imports and the per-module helper -------------------------------------------------------


def numpy_name(fixer) -> str:
    """How module-level code spells numpy, importing it (as ``np`` when free) if it cannot."""
    for node in fixer.ctx.tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "numpy" and alias.asname:
                    return alias.asname
                if alias.name.split(".")[0] == "numpy" and not alias.asname:
                    return "numpy"
    if not fixer.ctx.is_bound("np"):
        fixer.add_import("numpy", asname="np")
        return "np"
    fixer.add_import("numpy")
    return "numpy"


ABSENT = "absent"
OURS = "ours"
TAKEN = "taken"


def helper_state(ctx: FileContext, name: str, template: str) -> str:
    """Whether the module lacks helper ``name``, defines it already, or binds the name otherwise."""
    defined = [node for node in ctx.tree.body if isinstance(node, ast.FunctionDef) and node.name == name]
    if len(defined) == 1 and _is_helper(defined[0], template):
        return OURS
    return TAKEN if ctx.is_bound(name) else ABSENT


def _is_helper(function: ast.FunctionDef, template: str) -> bool:
    """Whether ``function`` is ``template`` with some spelling of numpy in place of NUMPY."""
    spellings = {
        ast.unparse(node.func.value)
        for node in ast.walk(function)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "array"
    }
    candidates = (
        {template.replace("NUMPY", spelling) for spelling in spellings} if "NUMPY" in template else {template}
    )
    expected = ast.dump(function)
    return any(ast.dump(ast.parse(candidate).body[0]) == expected for candidate in candidates)


def insert_helper(module: cst.Module, name: str, source: str) -> cst.Module:
    """Put the helper after the module's leading imports, once."""
    if any(isinstance(node, cst.FunctionDef) and node.name.value == name for node in module.body):
        return module
    return insert_after_preamble(module, source.strip() + "\n")
