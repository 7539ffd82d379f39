"""Which definitions of a name reach a read, narrowed for capsules: the shared
``scopes.reaching`` less the definitions a later assignment always overwrites before the read
(``x = to_dlpack(x); x = from_dlpack(x)`` then ``return x``), and, the other way, the reads one
definition reaches (``reached``), computed once per scope and name."""

from __future__ import annotations

import ast

from jax_codemod.analysis.context import FileContext
from jax_codemod.analysis.scopes import (
    COMPREHENSIONS,
    TRY_STAR,
    Definition,
    Scopes,
    _contains,
    end_of,
    start_of,
)


class Reaching:
    def __init__(self, ctx: FileContext, scopes: Scopes) -> None:
        self.ctx = ctx
        self.scopes = scopes
        self._loads: dict[int, dict[str, list[ast.Name]]] = {}
        # Per read: ``reaching`` (``reached`` asks it of every read once per definition).
        self._reaching: dict[ast.Name, tuple[list[Definition], bool]] = {}
        # (id(scope), name) -> (reads by id of the definition node reaching them, closure reads, scope)
        self._reached: dict[tuple[int, str], tuple] = {}

    def loads(self, scope: ast.AST, name: str) -> list[ast.Name]:
        """Reads of ``name`` that refer to ``scope``'s variable, nested scopes included."""
        key = id(scope)
        if key not in self._loads:
            found: dict[str, list[ast.Name]] = {}
            for node in ast.walk(scope):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                    found.setdefault(node.id, []).append(node)
            self._loads[key] = found
        return [n for n in self._loads[key].get(name, []) if self.scopes.binding_scope(n) is scope]

    def reached(self, definition: ast.stmt, name: str) -> tuple[list[ast.Name], list[ast.Name], bool]:
        """(reads ``definition`` reaches, reads by nested functions, whether it is sure).

        A read is reached when the shared analysis lists ``definition`` among the
        definitions that may reach it; it is *only* reached when it is the one that always
        runs before it (``sole``). Reads in comprehensions count as reads of the scope."""
        scope = self.scopes.scope_of(definition)
        key = (id(scope), name)
        found = self._reached.get(key)
        if found is None:
            # Once per scope and name, for all its definitions: asked per definition, each
            # asked every read's reaching definitions again (cubic in a name rebound in 2,000
            # branches and read in each).
            by_definition: dict[int, list[ast.Name]] = {}
            closures = []
            for load in self.loads(scope, name):
                own = self.scopes.scope_of(load)
                while isinstance(own, COMPREHENSIONS) and own is not scope:
                    own = self.scopes.enclosing(own)
                if own is not scope:
                    closures.append(load)
                    continue
                anchor = load
                inner = self.scopes.scope_of(load)
                while isinstance(inner, COMPREHENSIONS) and inner is not scope:
                    anchor, inner = inner, self.scopes.enclosing(inner)
                reaching, _ = (self.reaching(load) if anchor is load
                               else self._killed(self.scopes.reaching_in(name, anchor, scope), anchor, scope))
                for node_id in dict.fromkeys(id(d.node) for d in reaching):
                    by_definition.setdefault(node_id, []).append(load)
            found = self._reached[key] = (by_definition, closures, scope)
        by_definition, closures, _scope = found
        return list(by_definition.get(id(definition), ())), list(closures), not self.scopes.declared_global(name, scope)

    def sole(self, definition: ast.stmt, load: ast.Name) -> bool:
        """Whether ``definition`` is the only definition that reaches ``load``."""
        reaching, complete = self.reaching(load)
        return complete and len(reaching) == 1 and reaching[0].node is definition

    def reaching(self, load: ast.Name) -> tuple[list[Definition], bool]:
        """The shared ``reaching``, less the definitions a later one always overwrites first.

        ``scopes.reaching`` lists every definition that *may* reach (it stops only at one that
        always runs before the use), so in ``if c: x = to_dlpack(x); x = from_dlpack(x)`` /
        ``return x`` it lists both branch assignments for the return. The capsule in the first
        one never gets there: every path from it to the return goes through the second."""
        kept = self._reaching.get(load)
        if kept is None:
            scope = self.scopes.scope_of(load)
            kept = self._reaching[load] = self._killed(self.scopes.reaching(load), load, scope)
        return list(kept[0]), kept[1]

    def _killed(self, found: tuple[list[Definition], bool], use: ast.AST,
                scope: ast.AST) -> tuple[list[Definition], bool]:
        reaching, complete = found
        if len(reaching) < 2:
            return reaching, complete
        # Definitions the shared analysis adds because a loop's next turn may bring them back:
        # when the definition that always runs before the use lies inside that loop (or is
        # the loop's own `for` target), the next turn rebinds the name before it gets there.
        back = [d for d in reaching if _after(d, use)]
        forward = [d for d in reaching if not _after(d, use)]
        always = forward[-1] if complete and forward else None
        # ``_overwrites(k, d, ...)`` holds only for a ``k`` whose block holds ``d`` or a statement
        # around it: one whose parent is an ancestor of ``d`` (up to the scope). Asking just those
        # keeps this linear in the definitions, not quadratic (2,000 `if c: x = ...` branches).
        by_parent: dict[ast.AST, list[Definition]] = {}
        for later in forward:
            by_parent.setdefault(self.ctx.parent(later.node), []).append(later)
        kept = []
        back_ids = {id(d) for d in back}
        for definition in reaching:
            if id(definition) in back_ids:
                if always is not None and self._turn_rebinds(always, definition, use):
                    continue
            elif any(k is not definition and self._overwrites(k, definition, use, scope)
                     for k in self._candidates(by_parent, definition, scope)):
                continue
            kept.append(definition)
        return kept, complete

    def _candidates(self, by_parent: dict, definition: Definition, scope: ast.AST) -> list[Definition]:
        """The definitions of ``by_parent`` (by parent node) whose parent is an ancestor of
        ``definition``'s node, up to and including ``scope``."""
        found: list[Definition] = []
        for ancestor in self.ctx.ancestors(definition.node):
            found.extend(by_parent.get(ancestor, ()))
            if ancestor is scope:
                break
        return found

    def _turn_rebinds(self, always: Definition, later: Definition, use: ast.AST) -> bool:
        """Whether ``always`` runs on every loop turn between ``later`` and ``use``: it sits in
        the body of the innermost loop that holds them both (or is that loop's target)."""
        loop = next((a for a in self.ctx.ancestors(use) if isinstance(a, (ast.For, ast.AsyncFor, ast.While))
                     and _holds(a, later.node)), None)
        if loop is None:
            return False
        if always.node is loop:
            return isinstance(loop, (ast.For, ast.AsyncFor))
        return any(_holds(s, always.node) for s in loop.body)

    def _overwrites(self, later: Definition, earlier: Definition, use: ast.AST, scope: ast.AST) -> bool:
        """Whether every path from ``earlier`` to ``use`` runs the statement ``later`` (which
        rebinds the name) after it: ``later`` stands in the block that holds ``earlier`` (or the
        statement around it), further down, with no ``break``/``continue`` out of that stretch
        and no handler or context manager that could skip from it to ``use``."""
        statement = later.node
        if not isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            return False
        if start_of(use) < end_of(statement) or end_of(earlier.node) > start_of(statement):
            return False
        block = _statement_list(self.ctx, statement)
        if block is None:
            return False
        position = next(i for i, s in enumerate(block) if s is statement)
        around = earlier.node
        while around is not None and not any(s is around for s in block[:position]):
            around = self.ctx.parent(around)
            if around is scope:
                return False
        if around is None:
            return False
        start = next(i for i, s in enumerate(block) if s is around)
        if any(_jumps_out(s) for s in block[start:position]):
            return False
        def inside(block: list[ast.stmt], node: ast.AST) -> bool:
            return any(start_of(s) <= start_of(node) and end_of(node) <= end_of(s) for s in block)

        for ancestor in self.ctx.ancestors(statement):
            if ancestor is scope:
                break
            if isinstance(ancestor, (ast.Try, TRY_STAR)):
                if ancestor.finalbody and inside(ancestor.finalbody, use):
                    return False
                if ancestor.handlers and inside(ancestor.body, statement) and not (
                    inside(ancestor.body, use) and not self._in_loop(ancestor, scope)
                ):
                    return False
            elif isinstance(ancestor, (ast.With, ast.AsyncWith)) and not inside(ancestor.body, use):
                return False  # a context manager may swallow an exception raised before ``later``
        return True

    def _in_loop(self, node: ast.AST, scope: ast.AST) -> bool:
        for ancestor in self.ctx.ancestors(node):
            if ancestor is scope:
                return False
            if isinstance(ancestor, (ast.For, ast.AsyncFor, ast.While)):
                return True
        return False

    # Producers and consumers --------------------------------------------------------


def _holds(outer: ast.AST, inner: ast.AST) -> bool:
    return start_of(outer) <= start_of(inner) and end_of(inner) <= end_of(outer)


def _after(definition: Definition, use: ast.AST) -> bool:
    """A definition that reaches ``use`` only through a loop's next turn."""
    return definition.bound_at > start_of(use) or _contains(definition.node, use, definition)


def _statement_list(ctx: FileContext, statement: ast.stmt) -> list[ast.stmt] | None:
    """The block (``body``, ``orelse``, ``finalbody`` ...) that holds ``statement``."""
    parent = ctx.parent(statement)
    for name in ("body", "orelse", "finalbody"):
        children = getattr(parent, name, None)
        if isinstance(children, list) and any(c is statement for c in children):
            return children
    return None


def _jumps_out(statement: ast.stmt, loops: int = 0) -> bool:
    """A ``break`` or ``continue`` in ``statement`` that leaves it (not one of a loop inside it)."""
    if isinstance(statement, (ast.Break, ast.Continue)):
        return loops == 0
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
        return False
    inner = loops + isinstance(statement, (ast.For, ast.AsyncFor, ast.While))
    for child in ast.iter_child_nodes(statement):
        # a loop's `else` runs after the loop: a break there leaves the outer one
        depth = loops if isinstance(statement, (ast.For, ast.AsyncFor, ast.While)) and any(
            child is s for s in statement.orelse) else inner
        if _jumps_out(child, depth):
            return True
    return False

