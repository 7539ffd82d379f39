"""Where code already handles an error: the ``try`` bodies whose handlers catch it.

Shared by every rule that declines to touch an export some ``except`` already answers.
"""

from __future__ import annotations

import ast

from jax_codemod.analysis.scopes import FUNCTIONS, TRY_STAR

BROAD_EXCEPTIONS = frozenset({"Exception", "BaseException"})


def in_try_body(statement: ast.AST, child: ast.AST) -> bool:
    """Whether ``child`` is in the body of ``statement`` as a try, where its handlers apply."""
    return isinstance(statement, (ast.Try, TRY_STAR)) and child in statement.body


def handler_catches(ctx, handler: ast.ExceptHandler, exceptions: frozenset[str]) -> bool:
    """Whether ``handler`` catches one of ``exceptions`` (last name components), or everything."""
    if handler.type is None:
        return True
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    for caught in types:
        spelled = ctx.qualname(caught)
        if spelled is None and isinstance(caught, ast.Name) and not ctx.is_bound(caught.id):
            spelled = caught.id
        if spelled and spelled.rsplit(".", 1)[-1] in exceptions | BROAD_EXCEPTIONS:
            return True
    return False


def caught(ctx, node: ast.AST, exceptions: frozenset[str], stop: ast.AST | None = None) -> bool:
    """Whether ``node`` runs in a try body, within its function (or ``stop``), that catches one
    of ``exceptions``."""
    child = node
    for ancestor in ctx.ancestors(node):
        if ancestor is stop or (stop is None and isinstance(ancestor, (*FUNCTIONS, ast.ClassDef))):
            return False
        if in_try_body(ancestor, child) and any(
            handler_catches(ctx, handler, exceptions) for handler in ancestor.handlers
        ):
            return True
        child = ancestor
    return False
