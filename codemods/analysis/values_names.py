"""Names and definitions (``values.Analysis``): what a name holds where it is read, from the
definitions that reach it (an assignment, an import, a ``def``, a class), a global's
assignments, and ``isinstance``/``match`` narrowing around the read."""

from __future__ import annotations

import ast
from dataclasses import replace

from jax_codemod.analysis.guards import isinstance_classes
from jax_codemod.analysis.names import canonical
from jax_codemod.analysis.scopes import ENTER, ITER, Definition
from jax_codemod.analysis.transforms import Transform
from jax_codemod.analysis.values_facts import _inspects, _names_read, _returns_its_argument
from jax_codemod.analysis.values_lattice import (
    CALLABLE,
    CLASS,
    FUNCTION,
    MULTI,
    NOT_ADDRESSABLE,
    TRANSFORM,
    UNKNOWN,
    UNKNOWN_VALUE,
    Value,
    join,
    join_paths,
)

# Decorators after which a function is still read as written: its calls return what its body
# returns (a `contextmanager`'s call is the generator its body makes; `with` enters it).
_RETURNING_DECORATORS = frozenset(
    {"staticmethod", "classmethod", "functools.wraps", "contextlib.contextmanager", "contextlib.asynccontextmanager"}
)


class Names:
    """What a name holds: its reaching definitions joined along their paths, narrowed by the checks
around the read."""


    def _name_value(self, name: ast.Name) -> Value:
        scopes = self.scopes
        scope = scopes.scope_of(name)
        if scopes.declared_global(name.id, scope):
            definitions = list(reversed(scopes.definitions(self.ctx.tree).get(name.id, [])))
            return join(self._definition_value(d) for d in definitions) if definitions else UNKNOWN_VALUE
        reaching, complete = scopes.reaching(name)
        values = [self._definition_value(d) for d in reaching]
        if not complete:
            parameter, outer, known = scopes.entry(name.id, scope)
            if parameter is not None:
                values.append(self.parameter_value(parameter))
            elif known:
                values.extend(self._definition_value(d) for d in outer)
            elif not values:
                values.append(self._global_value(name))
            else:
                values.append(UNKNOWN_VALUE)
        result = join_paths(values)
        if result.placement in (MULTI, NOT_ADDRESSABLE) and self._tested_before_bound(name.id, reaching, scope):
            result = join(values)
        if result.kind == UNKNOWN:
            narrowed = self._narrowed(name, reaching)
            if narrowed is not None:
                return narrowed
        return result

    def _guarded_return(self, function: ast.AST, statements: list[ast.Return]) -> bool:
        """Whether a `return` of ``function`` sits under an `if` or `while` whose test looks into
        a name the returned expression reads (``_inspects``)."""
        return any(self._under_test_of(statement, function, _names_read(statement.value)) for statement in statements)

    def _tested_before_bound(self, name: str, reaching: list[Definition], scope: ast.AST) -> bool:
        """Whether a definition of ``name`` that reaches here is bound under an `if` or `while`
        whose test looks into ``name`` (``_inspects``: `if len(x.sharding.device_set) > 1: x =
        jax.device_put(x, device)`): which path runs depends on what it holds, so a sharded array
        along the other path is no evidence (``join_paths`` gives way to the weaker claim)."""
        return any(self._under_test_of(definition.node, scope, {name}) for definition in reaching)

    def _under_test_of(self, node: ast.AST, scope: ast.AST, names: set[str]) -> bool:
        """Whether ``node`` sits, within ``scope``, under an `if` or `while` whose test looks
        into one of ``names`` (``_inspects``)."""
        for ancestor in self.ctx.ancestors(node):
            if ancestor is scope:
                return False
            if ancestor.__class__ in (ast.If, ast.While) and _inspects(ancestor.test, names):
                return True
        return False

    def _global_value(self, name: ast.Name) -> Value:
        qualified = canonical(self.ctx.qualname(name))
        return self._qualified_value(qualified) if qualified else UNKNOWN_VALUE

    def _definition_value(self, definition: Definition) -> Value:
        node = definition.node
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            return self._import_value(node, definition)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return self._function_value(node)
        if isinstance(node, ast.ClassDef):
            return Value(CLASS, f"class `{node.name}`", node=node, owner=self._here)
        if isinstance(node, ast.AugAssign):
            # ``x += y``: what ``x`` held before, combined with ``y``.
            return self._combine([self.value_of(node.target), self.value_of(node.value)], node)
        if definition.value is None:
            return UNKNOWN_VALUE
        value = self.value_of(definition.value)
        if not definition.path and definition.value.__class__ in (ast.List, ast.Dict) and definition.name:
            value = self._with_writes(definition, value)
        for step in definition.path:
            if step == ENTER:
                value = self._entered(value, node.__class__ is ast.AsyncWith)
            else:
                value = self._iterated(value) if step == ITER else value.element(step)
        return value

    def _import_value(self, node: ast.AST, definition: Definition) -> Value:
        for alias in node.names:
            local = (alias.asname or alias.name).split(".", 1)[0]
            if local != definition.name:
                continue
            if isinstance(node, ast.Import):
                qualified = alias.name if alias.asname else alias.name.split(".", 1)[0]
            elif node.level:
                project = self.ctx.project
                base = project.absolute(self.ctx.root_path, node.level, node.module) if project else None
                if base is None:
                    return UNKNOWN_VALUE
                qualified = f"{base}.{alias.name}"
            elif not node.module:
                return UNKNOWN_VALUE
            else:
                qualified = f"{node.module}.{alias.name}"
            return self._qualified_value(canonical(qualified))
        return UNKNOWN_VALUE

    def _function_value(self, function: ast.AST) -> Value:
        decorators = list(getattr(function, "decorator_list", ()))
        if not decorators:
            return Value(FUNCTION, f"`{function.name}`", node=function, owner=self._here)
        transform = None
        for decorator in reversed(decorators):
            value = self.value_of(decorator)
            if value.kind != TRANSFORM:
                if self.decorator_name(decorator) in _RETURNING_DECORATORS or self._caches(decorator):
                    continue
                if transform is None and _returns_its_argument(value, self._owner(value)):
                    continue  # `@register("torch")`: a registry that hands the function back
                return UNKNOWN_VALUE if transform is None else self._callable(transform, function)
            if transform is None:
                transform = value.transform.with_options((), function)
        if transform is None:  # `@staticmethod`, `@classmethod`: the function itself
            return Value(FUNCTION, f"`{function.name}`", node=function, owner=self._here)
        return self._callable(transform, function)

    def _callable(self, transform: Transform, function: ast.AST | None) -> Value:
        transform = replace(transform, function=function) if function is not None else transform
        return Value(
            CALLABLE, transform.why or f"a `{transform.name}` function", transform=transform, node=function, owner=self._here
        )


    def _narrowed(self, name: ast.Name, reaching: list[Definition]) -> Value | None:
        """``isinstance(name, T)`` around the use, an early exit unless it holds, or ``case T():``;
        only while no definition after the check reaches the use."""
        found = self._narrowing(name)
        if found is None:
            return None
        value, check = found
        if any(d.bound_at > (check.lineno, check.col_offset) for d in reaching):
            return None
        return value

    def _narrowing(self, name: ast.Name) -> tuple[Value, ast.AST] | None:
        scope = self.scopes.scope_of(name)
        child: ast.AST = name
        chain = list(self.ctx.ancestors(name))
        for position, ancestor in enumerate(chain):
            if isinstance(ancestor, (ast.If, ast.IfExp, ast.While)) and child is not ancestor.test:
                body = ancestor.body if isinstance(ancestor.body, list) else [ancestor.body]
                found = self._isinstance_type(ancestor.test, name.id, negated=child not in body)
                if found is not None:
                    return found, ancestor.test
            if isinstance(ancestor, ast.match_case) and child is not ancestor.pattern:
                match = chain[position + 1]  # a match_case has no position: no parent lookup
                if isinstance(match.subject, ast.Name) and match.subject.id == name.id:
                    pattern = ancestor.pattern
                    if isinstance(pattern, ast.MatchAs) and pattern.pattern is not None:
                        pattern = pattern.pattern
                    if isinstance(pattern, ast.MatchClass):
                        found = self.annotation_value(pattern.cls)
                        if found.kind != UNKNOWN:
                            return replace(found, why=f"`case {self.ctx.source_of(pattern.cls)}()`"), pattern
            for block_name in ("body", "orelse", "finalbody"):
                block = getattr(ancestor, block_name, None)
                if not isinstance(block, list):
                    continue
                positions, exits = self._early_exits(block)
                index = positions.get(child)
                if index is None:
                    continue
                for position_of_exit, statement in exits:
                    if position_of_exit >= index:
                        break
                    found = self._isinstance_type(statement.test, name.id, negated=True)
                    if found is not None:
                        return found, statement
            if ancestor is scope:
                return None
            child = ancestor
        return None

    def _early_exits(self, block: list[ast.stmt]) -> tuple[dict[ast.AST, int], list[tuple[int, ast.If]]]:
        """The position of each statement of ``block``, and its ``if ...: return/raise/continue/
        break`` statements (no ``else``) in order: every use in a long block asks for them, so
        they are found once per block, not once per use."""
        found = self._blocks.get(id(block))
        if found is None:
            positions = {statement: index for index, statement in enumerate(block)}
            exits = [
                (index, statement)
                for index, statement in enumerate(block)
                if isinstance(statement, ast.If)
                and not statement.orelse
                and statement.body
                and isinstance(statement.body[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break))
            ]
            found = self._blocks[id(block)] = (positions, exits, block)
        return found[0], found[1]

    def _isinstance_type(self, test: ast.AST, ident: str, negated: bool = False) -> Value | None:
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return self._isinstance_type(test.operand, ident, not negated)
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or if negated else ast.And):
            for value in test.values:
                found = self._isinstance_type(value, ident, negated)
                if found is not None:
                    return found
            return None
        if negated:
            return None
        types = isinstance_classes(test, ident)
        if types is not None:
            found = join(self.annotation_value(t) for t in types)
            if found.kind != UNKNOWN:
                return replace(found, why="an `isinstance` check")
        return None
