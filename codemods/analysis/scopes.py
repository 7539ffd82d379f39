"""Scopes, bindings and the definitions that reach a use, for one file's ``ast``.

The layer under ``values``: it knows names, not values.

- ``Scopes.scope_of(node)``: the function, lambda, comprehension, class body or module whose
  names ``node`` sees first.
- ``Scopes.definitions(scope)``: name -> every ``Definition`` the scope makes, in order. A
  definition says which expression is bound and how to get from it to the name
  (``path``: tuple positions and ``ITER``, one element of iterating), so ``a, (b, c) = f()``
  and ``for key, value in params.items()`` are followed, not given up on.
- ``Scopes.reaching(name)``: the definitions of the name's own scope that may reach that
  use (latest first, stopping at one that always runs before it; a loop lets the
  definitions later in its body reach too), and whether they are complete. When they are
  not, ``Scopes.entry(name)`` says what the name held before the scope bound it: a
  parameter (``ast.arg``) or the definitions of an enclosing scope.
"""

from __future__ import annotations

import ast
import bisect
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
SCOPES = (*FUNCTIONS, *COMPREHENSIONS, ast.ClassDef, ast.Module)
TRY_STAR = getattr(ast, "TryStar", ast.Try)
_BRANCHES = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, TRY_STAR, ast.Match, ast.IfExp, ast.BoolOp)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
ALWAYS_BEFORE = (0, 0)

_DEFINITIONS = (*FUNCTIONS, ast.ClassDef)
_AST = ast.AST

# A step of Definition.path: one element of iterating the value (a for target).
ITER = "iter"
ENTER = "enter"  # `with <value> as name`: what entering the value gives


@dataclass(frozen=True)
class Definition:
    """One binding of a name."""

    node: ast.AST  # the statement or expression that binds it
    value: ast.expr | None  # the expression bound; None: nothing this analysis can follow
    path: tuple = ()  # from ``value`` to the name: tuple indexes (int) and ITER
    bound_at: tuple[int, int] = ALWAYS_BEFORE  # uses from this position on see it
    name: str = ""  # the name bound

    @property
    def kind(self) -> str:
        return type(self.node).__name__


def end_of(node: ast.AST) -> tuple[int, int]:
    return (node.end_lineno, node.end_col_offset)


def start_of(node: ast.AST) -> tuple[int, int]:
    return (node.lineno, node.col_offset)


def scope_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """Nodes that run in ``scope`` itself, not in the functions, classes or comprehensions in it.

    Decorators, defaults and a comprehension's first iterable run in the enclosing scope.
    """
    if isinstance(scope, COMPREHENSIONS):
        first, *rest = scope.generators
        stack: list[ast.AST] = [first.target, *first.ifs, *rest]
        stack += [scope.key, scope.value] if isinstance(scope, ast.DictComp) else [scope.elt]
    elif isinstance(scope, ast.Lambda):
        stack = [scope.body]
    else:
        stack = list(scope.body)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, _DEFINITIONS):
            stack.extend(getattr(node, "decorator_list", ()))
            stack.extend(_defaults(node))
            continue
        if isinstance(node, COMPREHENSIONS):
            stack.append(node.generators[0].iter)
            continue
        # ast.iter_child_nodes, inlined: it is most of the cost of walking a scope.
        for name in node._fields:
            value = getattr(node, name, None)
            if value.__class__ is list:
                for item in value:
                    if isinstance(item, _AST):
                        stack.append(item)
            elif isinstance(value, _AST):
                stack.append(value)


# Fields that hold a name, a number or a flag, or the expression contexts and operators
# (instances without fields, shared by the whole tree), on every Python the parser runs on.
_LEAF_FIELDS = frozenset(
    {"id", "attr", "arg", "module", "asname", "kind", "type_comment", "level", "is_async", "conversion", "tag"}
    | {"ctx", "op", "ops"}
)
# Node class -> the fields ``children`` reads (filled by ``child_fields``).
CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def child_fields(cls: type) -> tuple[str, ...]:
    """The fields ``children`` reads of a node of class ``cls`` (for walks that inline it)."""
    fields = CHILD_FIELDS.get(cls)
    return _child_fields(cls) if fields is None else fields


def _child_fields(cls: type) -> tuple[str, ...]:
    fields = tuple(name for name in cls._fields if name not in _LEAF_FIELDS)
    if cls is ast.Constant or cls.__name__ == "MatchSingleton":
        fields = ()  # their value is a Python constant
    CHILD_FIELDS[cls] = fields
    return fields


def children(node: ast.AST) -> list[ast.AST]:
    """``ast.iter_child_nodes(node)`` without the expression contexts and operators, in the
    same order; the fields that never hold a node are not read (JAX001's walks of the
    functions it checks spend most of their time here)."""
    fields = CHILD_FIELDS.get(node.__class__)
    if fields is None:
        fields = _child_fields(node.__class__)
    found: list[ast.AST] = []
    for name in fields:
        value = getattr(node, name, None)
        if value.__class__ is list:
            found.extend([item for item in value if isinstance(item, _AST)])
        elif isinstance(value, _AST):
            found.append(value)
    return found


def walk_values(node: ast.AST) -> list[ast.AST]:
    """``walk(node)`` without the expression contexts and operators (the nodes ``children``
    leaves out), in the same breadth-first order: they have no children, so leaving them out
    moves no other node."""
    queue = [node]
    append, fields_of, node_class = queue.append, CHILD_FIELDS.get, _AST
    # (Appended one by one, in field order: no list made per field of every node.)
    for current in queue:  # (a list iterator sees what is appended while it runs)
        fields = fields_of(current.__class__)
        if fields is None:
            fields = _child_fields(current.__class__)
        for name in fields:
            value = getattr(current, name, None)
            if value.__class__ is list:
                for item in value:
                    if isinstance(item, node_class):
                        append(item)
            elif isinstance(value, node_class):
                append(value)
    return queue


def walk(node: ast.AST) -> list[ast.AST]:
    """``list(ast.walk(node))``, in the same (breadth-first) order, at ~1.6x its speed."""
    queue = [node]
    append, node_class = queue.append, _AST
    for current in queue:  # (a list iterator sees what is appended while it runs)
        for name in current._fields:
            value = getattr(current, name, None)
            if value.__class__ is list:
                for item in value:
                    if isinstance(item, node_class):
                        append(item)
            elif isinstance(value, node_class):
                append(value)
    return queue


def _defaults(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, ast.ClassDef):
        return [*node.bases, *(k.value for k in node.keywords)]
    arguments = node.args
    found = [*arguments.defaults, *(d for d in arguments.kw_defaults if d is not None)]
    if not isinstance(node, ast.Lambda):
        every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
        found += [a.annotation for a in every if a.annotation is not None]
    return found


def ancestors(ctx, node: ast.AST) -> Iterator[ast.AST]:
    """``ctx.ancestors(node)``, also cheap for a node without a position.

    ``FileContext`` finds a node's parents in the map of its module-level statement, chosen by
    line; a node without a line (a ``comprehension``, ``arguments``, ``withitem``) would make it
    build the parent map of the whole file. Such a node's ancestors are those of a positioned
    child, less the node itself.
    """
    if getattr(node, "lineno", None) is not None:
        return ctx.ancestors(node)
    child = next((c for c in ast.iter_child_nodes(node) if getattr(c, "lineno", None) is not None), None)
    if child is None:
        return ctx.ancestors(node)
    chain = ctx.ancestors(child)
    if next(chain, None) is not node:  # not where the tree says: the exact, slow answer
        return ctx.ancestors(node)
    return chain


def function_of(ctx, parameter: ast.arg) -> ast.AST | None:
    """The function or lambda whose parameter ``parameter`` is.

    Its parent is an ``arguments`` node, which has no position: asking for that node's parent
    would build a parent map of the whole file, where the parameter's own ancestors (through
    the map of its module-level statement) hold the answer.
    """
    chain = ctx.ancestors(parameter)
    if next(chain, None) is None:
        return None
    return next(chain, None)


def parameters(scope: ast.AST) -> list[ast.arg]:
    if not isinstance(scope, FUNCTIONS):
        return []
    arguments = scope.args
    extra = [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
    return [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, *extra]


def bound_names(target: ast.AST, path: tuple = ()) -> Iterator[tuple[ast.Name, tuple]]:
    """(name, path) for each name a target binds; a starred element's path is unknown (None)."""
    if isinstance(target, ast.Name):
        yield target, path
    elif isinstance(target, (ast.Tuple, ast.List)):
        starred = any(isinstance(e, ast.Starred) for e in target.elts)
        for index, element in enumerate(target.elts):
            if isinstance(element, ast.Starred):
                yield from ((n, None) for n, _ in bound_names(element.value))
            elif path is None or starred:
                yield from ((n, None) for n, _ in bound_names(element))
            else:
                yield from bound_names(element, (*path, index))


class Scopes:
    """Scopes and reaching definitions of one file; computed lazily, per scope."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self._definitions: dict[ast.AST, dict[str, list[Definition]]] = {}
        self._declared: dict[ast.AST, set[str]] = {}
        self._guard_chains: dict[tuple[ast.AST, ast.AST], list[ast.AST]] = {}
        self._scope_of: dict[ast.AST, ast.AST] = {}
        self._reaching: dict[ast.Name, tuple[list[Definition], bool]] = {}
        self._bounds: dict[tuple[ast.AST, str], list[tuple[int, int]]] = {}

    # Scopes ----------------------------------------------------------------------------

    def scope_of(self, node: ast.AST) -> ast.AST:
        """The innermost scope whose names ``node`` sees (decorators and defaults: the outer one).

        Kept per node: the capsule analysis asks it of every read of a name once per definition
        of that name (quadratic in a module that rebinds one name thousands of times)."""
        found = self._scope_of.get(node)
        if found is None:
            found = self._scope_of[node] = self._find_scope(node)
        return found

    def _find_scope(self, node: ast.AST) -> ast.AST:
        if isinstance(node, ast.arg):
            return function_of(self.ctx, node) or self.ctx.tree
        child, grandchild = node, None
        for ancestor in ancestors(self.ctx, node):
            if isinstance(ancestor, SCOPES) and not self._runs_outside(ancestor, child, grandchild):
                return ancestor
            child, grandchild = ancestor, child
        return self.ctx.tree

    @staticmethod
    def _runs_outside(scope: ast.AST, child: ast.AST, grandchild: ast.AST | None) -> bool:
        if isinstance(scope, COMPREHENSIONS):
            return child is scope.generators[0] and grandchild is child.iter
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if isinstance(scope, ast.ClassDef):
                return child in scope.decorator_list or child in _defaults(scope)
            return child in scope.decorator_list or child is scope.args or child is scope.returns
        if isinstance(scope, ast.Lambda):
            return child is scope.args
        return False

    def enclosing(self, scope: ast.AST) -> ast.AST | None:
        """The scope a nested scope's free names resolve in (class bodies are skipped)."""
        if scope is self.ctx.tree:
            return None
        outer = self.scope_of(scope)
        while isinstance(outer, ast.ClassDef) and not isinstance(scope, COMPREHENSIONS):
            outer = self.scope_of(outer)
        return outer

    def declared_global(self, name: str, scope: ast.AST) -> bool:
        if scope not in self._declared:
            self._declared[scope] = (
                {
                    n
                    for node in _binding_nodes(scope, walrus=False)  # global is a statement
                    if isinstance(node, (ast.Global, ast.Nonlocal))
                    for n in node.names
                }
                if not isinstance(scope, ast.Module)
                else set()
            )
        return name in self._declared[scope]

    # Definitions -----------------------------------------------------------------------

    def definitions(self, scope: ast.AST) -> dict[str, list[Definition]]:
        found = self._definitions.get(scope)
        if found is None:
            found = self._definitions[scope] = _collect(scope, self._walrus)
        return found

    @cached_property
    def _walrus(self) -> bool:
        """The file may bind a name inside an expression (``:=``); otherwise only statements,
        handlers and match patterns bind, and collecting a scope's definitions skips its
        expressions (most of its nodes)."""
        return ":=" in self.ctx.text

    def parameter(self, name: str, scope: ast.AST) -> ast.arg | None:
        return next((a for a in parameters(scope) if a.arg == name), None)

    def binds(self, name: str, scope: ast.AST) -> bool:
        return name in self.definitions(scope) or self.parameter(name, scope) is not None

    def bound_locally(self, ident: str, node: ast.AST) -> bool:
        """Whether ``ident`` at ``node`` may read a function's (or class's) own binding instead
        of the module's: code inserted there must not spell the module's name with it."""
        scope = self.scope_of(node)
        while scope is not None and scope is not self.ctx.tree:
            if self.declared_global(ident, scope):
                return False
            if self.binds(ident, scope):
                return True
            scope = self.enclosing(scope)
        return False

    def binding_scope(self, name: ast.Name) -> ast.AST:
        """The scope whose ``name.id`` the use refers to (the module when none binds it)."""
        scope = self.scope_of(name)
        while scope is not None:
            if self.declared_global(name.id, scope):
                return self.ctx.tree
            if self.binds(name.id, scope):
                return scope
            scope = self.enclosing(scope)
        return self.ctx.tree

    def reaching(self, name: ast.Name) -> tuple[list[Definition], bool]:
        """Definitions of ``name``'s own scope that may reach this use, latest first; and
        whether one of them always runs before it (so the list is complete)."""
        found = self._reaching.get(name)
        if found is None:
            scope = self.scope_of(name)
            found = ([], False) if self.declared_global(name.id, scope) else self.reaching_in(name.id, name, scope)
            self._reaching[name] = found
        return list(found[0]), found[1]  # a copy: callers may change theirs

    def reaching_in(self, ident: str, use: ast.AST, scope: ast.AST) -> tuple[list[Definition], bool]:
        start = start_of(use)
        reaching: list[Definition] = []
        later: list[Definition] = []
        use_ancestors = list(self._ancestors_within(use, scope))
        loops = [a for a in use_ancestors if isinstance(a, _LOOPS)]
        around = set(use_ancestors)
        definitions = self.definitions(scope).get(ident, [])
        if not loops:
            # Only a loop brings back a definition bound after the use: without one, those
            # (sorted by where they bind) are never looked at. A use in a module that rebinds
            # its name thousands of times would otherwise pass over all of them.
            key = (scope, ident)
            bounds = self._bounds.get(key)
            if bounds is None or len(bounds) != len(definitions):
                bounds = self._bounds[key] = [d.bound_at for d in definitions]
            definitions = definitions[: bisect.bisect_right(bounds, start)]
        for definition in reversed(definitions):
            if definition.bound_at > start or (_may_hold(definition.node, start) and _contains(definition.node, use, definition)):
                if loops and any(_contains_plain(loop, definition.node) for loop in loops):
                    later.append(definition)
                continue
            reaching.append(definition)
            if self._always_before(definition.node, use, scope, around):
                return reaching + later, True
        if reaching and self._every_arm_defines(reaching, use, scope):
            return reaching + later, True
        return reaching + later, False

    def _every_arm_defines(self, reaching: list[Definition], use: ast.AST, scope: ast.AST) -> bool:
        """``if c: x = a`` / ``else: x = b`` before the use: one of the definitions runs on every
        path that reaches it (an arm may also leave instead: ``raise``, ``return``)."""
        nodes = {id(d.node) for d in reaching if isinstance(d.node, ast.stmt)}
        if not nodes:
            return False
        for definition in reaching:
            for ancestor in self._ancestors_within(definition.node, scope):
                if (
                    isinstance(ancestor, ast.If)
                    and not _contains_plain(ancestor, use)
                    and self._always_before(ancestor, use, scope)
                    and _block_defines(ancestor.body, nodes)
                    and _block_defines(ancestor.orelse, nodes)
                ):
                    return True
        return False

    def may_reach(self, name: ast.Name) -> list[Definition]:
        """Every definition that may be what ``name`` reads: its own scope's that reach it, and
        when those may not run, the enclosing scopes' (as ``values`` reads a name)."""
        scope = self.scope_of(name)
        if self.declared_global(name.id, scope):
            return list(self.definitions(self.ctx.tree).get(name.id, []))
        reaching, complete = self.reaching(name)
        if complete:
            return reaching
        _, outer, _ = self.entry(name.id, scope)
        return reaching + outer

    def entry(self, ident: str, scope: ast.AST) -> tuple[ast.arg | None, list[Definition], bool]:
        """What ``ident`` holds when ``scope`` starts: (parameter, outer definitions, complete)."""
        parameter = self.parameter(ident, scope)
        if parameter is not None:
            return parameter, [], True
        outer = self.enclosing(scope)
        if outer is None:
            return None, [], False
        if isinstance(scope, COMPREHENSIONS):
            reaching, complete = self.reaching_in(ident, scope, outer)
            if complete:
                return None, reaching, True
            parameter, more, complete = self.entry(ident, outer)
            return parameter, reaching + more, complete
        # A function runs later: any definition of the enclosing scopes may reach it.
        while outer is not None:
            parameter = self.parameter(ident, outer)
            if parameter is not None:
                return parameter, [], True
            definitions = self.definitions(outer).get(ident)
            if definitions:
                return None, list(reversed(definitions)), True
            outer = self.enclosing(outer)
        return None, [], False

    def _guards(self, node: ast.AST, scope: ast.AST) -> list[ast.AST]:
        """The ancestors of ``node`` within ``scope`` that ``_always_before`` looks at (branches and
        ``try``), innermost first: the same for every use a definition may reach, so kept."""
        key = (node, scope)
        found = self._guard_chains.get(key)
        if found is None:
            found = self._guard_chains[key] = [
                a for a in self._ancestors_within(node, scope) if isinstance(a, _BRANCHES)
            ]
        return found

    def _ancestors_within(self, node: ast.AST, scope: ast.AST) -> Iterator[ast.AST]:
        for ancestor in ancestors(self.ctx, node):
            if ancestor is scope:
                return
            yield ancestor

    def _always_before(self, node: ast.AST, use: ast.AST, scope: ast.AST, use_ancestors: set | None = None) -> bool:
        """``node`` runs whenever ``use`` does: no branch holds it that does not hold ``use``.

        ``use_ancestors``: ``use``'s ancestors within ``scope``, when the caller has them (a use
        asks this of each definition that may reach it: computed once, not once per definition).
        """
        if isinstance(node, (*FUNCTIONS, ast.ClassDef)) and node is scope:
            return True
        if use_ancestors is None:
            use_ancestors = set(self._ancestors_within(use, scope))
        for ancestor in self._guards(node, scope):
            if isinstance(ancestor, _BRANCHES) and ancestor not in use_ancestors:
                return False
            # A handler's use sees the definitions of the try body only maybe.
            if (
                isinstance(ancestor, (ast.Try, TRY_STAR))
                and ancestor in use_ancestors
                and any(_contains_plain(h, use) for h in ancestor.handlers)
                and any(_contains_plain(s, node) for s in ancestor.body)
            ):
                return False
        return True


def _block_defines(block: list[ast.stmt], definitions: set[int]) -> bool:
    """Whether running ``block`` to its end always runs one of ``definitions`` (statement ids)."""
    for statement in block:
        if id(statement) in definitions:
            return True
        if isinstance(statement, (ast.Raise, ast.Return, ast.Continue, ast.Break)):
            return True  # this path never reaches the use
        if isinstance(statement, ast.If) and _block_defines(statement.body, definitions) and _block_defines(
            statement.orelse, definitions
        ):
            return True
    return False


def _may_hold(node: ast.AST, start: tuple[int, int]) -> bool:
    """Whether ``node`` may contain a use at ``start``: not when it ends before it."""
    end = getattr(node, "end_lineno", None)
    return end is None or (end, node.end_col_offset) > start


def _contains_plain(outer: ast.AST, inner: ast.AST) -> bool:
    if not hasattr(outer, "lineno") or not hasattr(inner, "lineno"):
        return False
    return start_of(outer) <= start_of(inner) and end_of(inner) <= end_of(outer)


def _contains(node: ast.AST, use: ast.AST, definition: Definition) -> bool:
    """A use inside the very statement that binds (``x = f(x)``) sees the previous binding."""
    if definition.bound_at == ALWAYS_BEFORE:
        return False
    if isinstance(node, (ast.For, ast.AsyncFor)):
        return _contains_plain(node.iter, use)
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return any(_contains_plain(item.context_expr, use) for item in node.items)
    if isinstance(node, (*FUNCTIONS, ast.ClassDef)):
        return False
    return _contains_plain(node, use) and not isinstance(node, ast.ExceptHandler)


def _binding_nodes(scope: ast.AST, walrus: bool = True) -> Iterator[ast.AST]:
    """The nodes of ``scope_nodes(scope)`` that can bind a name in it: all of them with
    ``walrus``; else its statements (not those of nested definitions), except handlers, match
    cases and their patterns, since without ``:=`` no expression binds anything."""
    if walrus:
        yield from scope_nodes(scope)
        return
    body = getattr(scope, "body", None)
    if not isinstance(body, list):
        return  # a lambda or comprehension: only expressions
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, _DEFINITIONS):
            continue
        if isinstance(node, ast.match_case):
            stack.extend(walk(node.pattern))
        for name in BODY_FIELDS:
            children = getattr(node, name, None)
            if isinstance(children, list):
                stack.extend(children)


# Fields of statements (and of except handlers and match cases) that hold statements.
BODY_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


def _collect(scope: ast.AST, walrus: bool = True) -> dict[str, list[Definition]]:
    found: dict[str, list[Definition]] = {}

    def add(name: str, node: ast.AST, value, path, bound_at) -> None:
        if path is None:
            value, path = None, ()
        found.setdefault(name, []).append(Definition(node, value, path, bound_at, name))

    def bind(target: ast.AST, node: ast.AST, value, path: tuple, bound_at) -> None:
        for name, name_path in bound_names(target, path):
            add(name.id, node, value, name_path, bound_at)

    if isinstance(scope, COMPREHENSIONS):
        for generator in scope.generators:
            bind(generator.target, generator, generator.iter, (ITER,), ALWAYS_BEFORE)
    for node in _binding_nodes(scope, walrus):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                bind(target, node, node.value, (), end_of(node))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if node.value is not None:
                add(node.target.id, node, node.value, (), end_of(node))
            elif isinstance(scope, ast.ClassDef):
                add(node.target.id, node, None, (), end_of(node))
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            add(node.target.id, node, node, (), end_of(node))
        elif isinstance(node, ast.NamedExpr):
            add(node.target.id, node, node.value, (), end_of(node))
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            bind(node.target, node, node.iter, (ITER,), end_of(node.target))
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if item.optional_vars is not None:
                    bind(item.optional_vars, node, item.context_expr, (ENTER,), end_of(item.optional_vars))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            add(node.name, node, None, (), end_of(node))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name != "*":
                    add((alias.asname or alias.name).split(".", 1)[0], node, None, (), end_of(node))
        elif isinstance(node, ast.ExceptHandler) and node.name:
            add(node.name, node, None, (), start_of(node))
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                bind(target, node, None, (), end_of(node))
        elif isinstance(node, ast.MatchAs) and node.name or isinstance(node, ast.MatchStar) and node.name:
            add(node.name, node, None, (), end_of(node))
        elif isinstance(node, ast.MatchMapping) and node.rest:
            add(node.rest, node, None, (), end_of(node))
    for definitions in found.values():
        definitions.sort(key=lambda d: d.bound_at)
    return found
