"""Fix shapes shared by the DLPack rules, kept out of any one rule's module.

What a value is lives in ``jax_codemod.analysis`` (values, scopes, guards); this module
holds only what rules build on top: when a call is a whole statement, and the two fix
shapes built on that: wrap the statement in ``try``/``except BufferError``, or route the
expression through one module-level helper.
"""

from __future__ import annotations

import ast
import inspect
from typing import TYPE_CHECKING

from jax_codemod.analysis.context import FileContext
from jax_codemod.analysis.guards import caught
from jax_codemod.engine.fixer import insert_after_preamble

if TYPE_CHECKING:
    import libcst as cst

# Guards and statements -----------------------------------------------------------------


_BUFFER_ERROR = frozenset({"BufferError"})


def is_guarded(ctx: FileContext, node: ast.AST) -> bool:
    """Whether ``node`` runs in the body of a try whose handlers catch BufferError."""
    return caught(ctx, node, _BUFFER_ERROR)


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
    import libcst as cst

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
    import libcst as cst

    if isinstance(statement, cst.AnnAssign):
        return cst.Assign(targets=[cst.AssignTarget(target=statement.target)], value=value)
    return statement.with_changes(value=value)


# Imports and the per-module helper -------------------------------------------------------


NUMPY_ALIASES = ("np", "numpy", "_np", "np_", "numpy_")


def numpy_name(fixer, shadowed: frozenset[str] = frozenset()) -> str:
    """How code spells numpy, importing it (as ``np`` when free) if it cannot; ``shadowed``: names
    the insertion site binds itself (a test's ``np = rng(...)``), which it must not use."""
    for node in fixer.ctx.tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "numpy" and alias.asname and alias.asname not in shadowed:
                    return alias.asname
                if alias.name.split(".")[0] == "numpy" and not alias.asname and "numpy" not in shadowed:
                    return "numpy"
    for candidate in NUMPY_ALIASES:
        if candidate in shadowed or fixer.ctx.is_bound(candidate):
            continue
        if candidate == "numpy":
            fixer.add_import("numpy")
        else:
            fixer.add_import("numpy", asname=candidate)
        return candidate
    raise ValueError("every spelling of numpy is taken")


def shadowed_names(ctx: FileContext, node: ast.AST, names) -> frozenset[str]:
    """Those of ``names`` that the scope around ``node`` binds itself."""
    scopes = ctx.analysis.scopes
    return frozenset(name for name in names if scopes.bound_locally(name, node))


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
    expected = _dump(function)
    return any(_dump(ast.parse(candidate).body[0]) == expected for candidate in candidates)


def _dump(function: ast.FunctionDef) -> str:
    """``ast.dump`` with the docstring as ``inspect.cleandoc`` reads it: the helper inserted into a
    module indented otherwise has its docstring's lines indented as the module is
    (``fixer.reindented``), and is still ours."""
    body = function.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(
        body[0].value.value, str
    ):
        docstring = ast.Expr(ast.Constant(inspect.cleandoc(body[0].value.value)))
        function = ast.FunctionDef(function.name, function.args, [docstring, *body[1:]], function.decorator_list,
                                   function.returns, function.type_comment, lineno=function.lineno)
    return ast.dump(function)


def insert_helper(module: cst.Module, name: str, source: str) -> cst.Module:
    """Put the helper after the module's leading imports, once."""
    import libcst as cst

    if any(isinstance(node, cst.FunctionDef) and node.name.value == name for node in module.body):
        return module
    return insert_after_preamble(module, source.strip() + "\n")
