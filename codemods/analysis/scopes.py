"""Scopes, bindings and straight-line reaching definitions, on the standard library's ``ast``.

Answers the questions a data-flow rule asks of a local variable: which scope owns a
name, where the scope binds and reads it, and which reads one assignment reaches. The
reaching analysis is deliberately straight-line: it is exact for an assignment and the
statements that follow it in the same block (up to the next assignment of the name in
that block), and says "unknown" (``None``) for anything a loop or a branch could change.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
SCOPES = (*FUNCTIONS, ast.ClassDef)
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
LOOPS = (ast.For, ast.AsyncFor, ast.While)
_BODY_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


@dataclass
class ScopeIndex:
    """Where one scope binds and reads each of its names."""

    node: ast.AST
    # name -> binding sites: statements/expressions that bind it (ast.arg for parameters)
    defs: dict[str, list[ast.AST]] = field(default_factory=dict)
    # name -> ast.Name loads that read this scope's variable (comprehension targets excluded)
    loads: dict[str, list[ast.Name]] = field(default_factory=dict)
    # names read by a nested function or class body (closures): their flow is not local
    free_in_nested: set[str] = field(default_factory=set)
    declared_global: set[str] = field(default_factory=set)

    def parameter(self, name: str) -> ast.arg | None:
        return next((d for d in self.defs.get(name, ()) if isinstance(d, ast.arg)), None)


def comprehension_targets(node: ast.AST) -> set[str]:
    names: set[str] = set()
    for generator in node.generators:
        names.update(_target_names(generator.target))
    return names


def _target_names(target: ast.AST) -> Iterator[str]:
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _target_names(element)
    elif isinstance(target, ast.Starred):
        yield from _target_names(target.value)


def _all_names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def index_scope(scope: ast.AST) -> ScopeIndex:
    index = ScopeIndex(scope)

    def bind(name: str, site: ast.AST) -> None:
        index.defs.setdefault(name, []).append(site)

    if isinstance(scope, FUNCTIONS):
        arguments = scope.args
        every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
        every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
        for argument in every:
            bind(argument.arg, argument)
        body = [scope.body] if isinstance(scope, ast.Lambda) else list(scope.body)
    else:
        body = list(scope.body)

    def visit(node: ast.AST, hidden: frozenset[str]) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bind(node.name, node)
            for part in [*node.decorator_list, *_defaults(node)]:
                visit(part, hidden)
            index.free_in_nested.update(_all_names(node) - {node.name})
            return
        if isinstance(node, ast.Lambda):
            for part in _defaults(node):
                visit(part, hidden)
            index.free_in_nested.update(_all_names(node.body))
            return
        if isinstance(node, COMPREHENSIONS):
            inner = hidden | comprehension_targets(node)
            for position, generator in enumerate(node.generators):
                # the first iterable is evaluated in the enclosing scope
                visit(generator.iter, hidden if position == 0 else inner)
                for condition in generator.ifs:
                    visit(condition, inner)
            for part in (getattr(node, "elt", None), getattr(node, "key", None), getattr(node, "value", None)):
                if part is not None:
                    visit(part, inner)
            return
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            index.declared_global.update(node.names)
        elif isinstance(node, ast.Name):
            if node.id in hidden:
                return
            if isinstance(node.ctx, ast.Load):
                index.loads.setdefault(node.id, []).append(node)
            else:
                bind(node.id, node)
            return
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                local = alias.asname or alias.name.split(".", 1)[0]
                if local != "*":
                    bind(local, node)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bind(node.name, node)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            # `x += 1` reads x too
            index.loads.setdefault(node.target.id, []).append(node.target)
        for child in ast.iter_child_nodes(node):
            visit(child, hidden)

    for statement in body:
        visit(statement, frozenset())
    return index


def _defaults(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, ast.ClassDef):
        return [*node.bases, *(k.value for k in node.keywords)]
    arguments = node.args
    return [*arguments.defaults, *(d for d in arguments.kw_defaults if d is not None)]


def statement_list(parent: ast.AST, statement: ast.stmt) -> list[ast.stmt] | None:
    """The body list of ``parent`` that holds ``statement``."""
    for name in _BODY_FIELDS:
        children = getattr(parent, name, None)
        if isinstance(children, list) and any(child is statement for child in children):
            return children
    return None


@dataclass(frozen=True)
class Reach:
    """The reads one assignment reaches, and the statements it spans."""

    uses: tuple[ast.Name, ...]
    # the statements after the assignment up to (and including) the one that rebinds the name
    region: tuple[ast.stmt, ...]
    killed_by: ast.stmt | None


def reached_uses(ctx, index: ScopeIndex, definition: ast.stmt, name: str) -> Reach | None:
    """The loads of ``name`` that the assignment ``definition`` reaches, or None if unsure.

    Exact for the statements after ``definition`` in its block, up to the first later
    statement of that block that rebinds ``name`` (whose own right-hand side still reads
    the old value). Unsure (None) when a read elsewhere could also see the assignment: a
    closure, a ``global``, a rebinding inside a later branch or loop, a loop around the
    assignment, or a read after the block with no rebinding in between.
    """
    if name in index.free_in_nested or name in index.declared_global:
        return None
    parent = ctx.parent(definition)
    block = statement_list(parent, definition) if parent is not None else None
    if block is None:
        return None
    position = next(i for i, s in enumerate(block) if s is definition)
    later = {id(s): i for i, s in enumerate(block) if i > position}
    killer_index = None
    for site in index.defs.get(name, ()):
        if isinstance(site, ast.arg) or _inside(ctx, site, definition):
            continue
        owner = site if id(site) in later else next((a for a in ctx.ancestors(site) if id(a) in later), None)
        if owner is not None:
            i = later[id(owner)]
            if _is_compound(owner):
                i -= 0.5  # rebinding somewhere inside: only the statements before it are exact
            killer_index = i if killer_index is None else min(killer_index, i)
    end = len(block) if killer_index is None else int(killer_index + 0.5) + (0 if killer_index % 1 else 1)
    region = block[position + 1:end]
    killer = block[end - 1] if killer_index is not None and killer_index % 1 == 0 else None
    inside = {id(n) for s in region for n in ast.walk(s)}
    before = {id(n) for s in block[:position + 1] for n in ast.walk(s)}
    uses = [use for use in index.loads.get(name, ()) if id(use) in inside]
    outside = [use for use in index.loads.get(name, ()) if id(use) not in inside]
    in_loop = any(isinstance(a, LOOPS) for a in _ancestors_until(ctx, definition, index.node))
    if killer is None:
        if killer_index is not None:
            # rebound inside a later compound statement: reads in it or after it are unsure
            if any(id(use) not in before for use in outside):
                return None
        elif any(id(use) not in before or in_loop for use in outside):
            return None
    return Reach(tuple(uses), tuple(region), killer)


def _inside(ctx, node: ast.AST, container: ast.AST) -> bool:
    return node is container or any(a is container for a in ctx.ancestors(node))


def _owning_statement(ctx, site: ast.AST, top_level: set[int]) -> ast.stmt | None:
    if isinstance(site, ast.arg):
        return None
    if id(site) in top_level:
        return site
    for ancestor in ctx.ancestors(site):
        if id(ancestor) in top_level:
            # bound inside a compound statement: only a plain statement counts as one binding
            return ancestor if not _is_compound(ancestor) else None
    return None


def _is_compound(statement: ast.AST) -> bool:
    return any(isinstance(getattr(statement, name, None), list) for name in _BODY_FIELDS)


def _ancestors_until(ctx, node: ast.AST, stop: ast.AST) -> Iterator[ast.AST]:
    for ancestor in ctx.ancestors(node):
        if ancestor is stop:
            return
        yield ancestor


def enclosing_scope(ctx, node: ast.AST) -> ast.AST:
    """The function, lambda or class whose body holds ``node``; the module otherwise."""
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, SCOPES):
            return ancestor
    return ctx.tree


def owner_scope(ctx, name: ast.Name, indexes) -> ast.AST | None:
    """The scope whose variable ``name`` reads (None: a comprehension or class-local name)."""
    for ancestor in ctx.ancestors(name):
        if isinstance(ancestor, COMPREHENSIONS) and name.id in comprehension_targets(ancestor):
            return None
        if isinstance(ancestor, FUNCTIONS):
            index = indexes(ancestor)
            if name.id in index.defs and name.id not in index.declared_global:
                return ancestor
    return ctx.tree
