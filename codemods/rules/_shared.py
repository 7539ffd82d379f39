"""Analyses and fix shapes shared by the DLPack rules, kept out of any one rule's module.

Which expressions are JAX arrays (``ArrayOrigins``, for JAX003 and JAX004), what a scope
binds, which exports sit in a ``try`` that catches ``BufferError``, when a call is a whole
statement, and the two fix shapes built on that: wrap the statement in
``try``/``except BufferError``, or route the expression through one module-level helper.
``_dlpack_exports`` (JAX002, JAX006) shares the array-method table, the statement and
try-body tests, and the node kinds that open a scope.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from jax_codemod._lazy import lazy_module
from jax_codemod.analysis.context import FileContext
from jax_codemod.engine.fixer import insert_after_preamble

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = lazy_module("libcst")  # imported by the first fix, not at start-up

# jax.* callables whose result is a jax.Array. jax.device_get returns NumPy arrays, and
# most of the rest of the namespace returns functions, pytrees or devices.
_JAX_ARRAY_NAMESPACES = ("jax.numpy.", "jax.random.", "jax.lax.", "jax.nn.", "jax.scipy.")
_JAX_ARRAY_FUNCTIONS = frozenset({"jax.device_put", "jax.block_until_ready", "jax.make_array_from_callback"})
_JAX_TRANSFORMS = frozenset({"jax.jit", "jax.pmap"})
# Annotations that promise a jax.Array (ArrayLike does not: it admits NumPy arrays and scalars).
_JAX_ARRAY_TYPES = frozenset({"jax.Array", "jax.numpy.ndarray"})
_OTHER_NAMESPACES = ("torch.", "numpy.", "cupy.", "tensorflow.")
# Methods and attributes of a jax.Array that return a jax.Array placed like the receiver:
# both origin analyses follow them back to it.
ARRAY_METHODS = frozenset(
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
        "clip",
        "round",
        "conj",
        "block_until_ready",
    }
)
ARRAY_ATTRIBUTES = frozenset({"T", "mT", "real", "imag"})
# ArrayOrigins also follows these; the sharding analysis does not, since the placement
# of ``x.dot(y)`` depends on ``y`` too, and adding the others there would change
# JAX002/JAX006 findings without a test that asks for it.
_FOLLOWED_METHODS = ARRAY_METHODS | {"cumsum", "dot", "__getitem__"}
_CATCHES_BUFFER_ERROR = frozenset({"BufferError", "Exception", "BaseException"})
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_SCOPES = (*FUNCTIONS, ast.ClassDef)
# `try`/`except*` exists from Python 3.11 on; its handlers guard its body all the same.
TRY_STAR = getattr(ast, "TryStar", ast.Try)

JAX = "jax"
OTHER = "other"


# Which expressions are JAX arrays ----------------------------------------------------


class ArrayOrigins:
    """Where an expression's array comes from: JAX, another library (OTHER), or unknown (None).

    Only local evidence counts: calls into jax's array namespaces, names whose every
    assignment in their scope is such a value, and parameters annotated ``jax.Array``.

    ``_dlpack_exports.Analysis`` answers "is this a JAX array" too, but not the same way:
    it follows the assignments that reach a use rather than every assignment in the
    scope, knows ``isinstance`` narrowing and jitted callables by name, and does not
    know NumPy or torch values (OTHER, which JAX003 needs). JAX004 on that analysis
    passes today's tests yet finds other exports, so the two stay apart until a change
    that means to move JAX004's findings.
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
        if isinstance(node, ast.Attribute) and node.attr in ARRAY_ATTRIBUTES:
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
            is_function = isinstance(ancestor, FUNCTIONS)
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
        if isinstance(call.func, ast.Attribute) and call.func.attr in _FOLLOWED_METHODS:
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
            if isinstance(ancestor, COMPREHENSIONS) and name.id in _comprehension_targets(ancestor):
                return None
            if isinstance(ancestor, ast.ClassDef) and name.id in self._scope_bindings(ancestor):
                return None
            if isinstance(ancestor, FUNCTIONS):
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

    if isinstance(scope, FUNCTIONS):
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
        if isinstance(node, (*_SCOPES, *COMPREHENSIONS)):
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
        if isinstance(ancestor, _SCOPES):
            return False
        if in_try_body(ancestor, child) and any(
            _catches_buffer_error(ctx, handler.type) for handler in ancestor.handlers
        ):
            return True
        child = ancestor
    return False


def in_try_body(statement: ast.AST, child: ast.AST) -> bool:
    """Whether ``child`` is in the body of ``statement`` as a try, where its handlers apply."""
    return isinstance(statement, (ast.Try, TRY_STAR)) and child in statement.body


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
    return statement if alone_on_its_lines(ctx, statement) else None


def alone_on_its_lines(ctx: FileContext, statement: ast.stmt) -> bool:
    """Whether a fix may put lines around ``statement``: nothing but a comment shares its lines."""
    first, last = ctx.lines[statement.lineno - 1], ctx.lines[statement.end_lineno - 1]
    # AST column offsets count UTF-8 bytes.
    before = first.encode("utf-8")[: statement.col_offset]
    after = last.encode("utf-8")[statement.end_col_offset :].strip()
    return not before.strip() and (not after or after.startswith(b"#"))


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
