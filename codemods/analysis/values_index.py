"""Where a file uses a name (``values.Analysis``'s index): the calls that pass it first, call it or
call a method of that name, and its reads, looked up near the lines that spell it for the first
few names and from one walk of the file after; the ``def``s a name may refer to; the reads of
an attribute."""

from __future__ import annotations

import ast
import bisect
from functools import cached_property

from jax_codemod.analysis.names import name_lines, spelled_as_parsed
from jax_codemod.analysis.scopes import CHILD_FIELDS, child_fields, walk_values
from jax_codemod.analysis.values_lattice import INSTANCE

_USE_KINDS = ("first", "func", "method", "load")
# Names looked up one by one before a file's full call index is built instead.
_NAMES_BEFORE_INDEX = 32
# ... while the names looked up so far stand on at most one line in this many; past that,
# the index is cheaper.
_NEAR_SHARE = 6


def _uses_near(tree: ast.Module, text: str, name: str) -> dict[str, list[ast.AST]]:
    """``Analysis._index()``'s lists for ``name``, from the statements whose lines hold it.

    Exact when ``spelled_as_parsed(text)``. Only statements are skipped (their positions are
    exact; a decorated definition starts at its first decorator), so every node that names
    ``name`` is reached, and the breadth-first walk of what is kept visits the kept nodes in
    ``ast.walk``'s order.
    """
    return _uses_on_lines(tree, name, name_lines(text, name))


def _uses_on_lines(tree: ast.Module, name: str, lines: list[int]) -> dict[str, list[ast.AST]]:
    """``_uses_near``'s walk: the statements that hold none of ``lines`` are skipped."""
    uses: dict[str, list[ast.AST]] = {kind: [] for kind in _USE_KINDS}
    if not lines:
        return uses
    first, func, method, load = (uses[kind] for kind in _USE_KINDS)
    last = lines[-1]
    queue: list[ast.AST] = [tree]
    append, leaves, stmt, bisect_left = queue.append, _LEAF_TOKENS, ast.stmt, bisect.bisect_left
    fields_of = CHILD_FIELDS.get
    index = 0
    while index < len(queue):
        node = queue[index]
        index += 1
        if isinstance(node, ast.Call):
            if node.args and isinstance(node.args[0], ast.Name) and node.args[0].id == name:
                first.append(node)
            if isinstance(node.func, ast.Name):
                if node.func.id == name:
                    func.append(node)
            elif isinstance(node.func, ast.Attribute) and node.func.attr == name:
                method.append(node)
        elif isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
            load.append(node)
        # ast.iter_child_nodes, inlined, less the leaf tokens (``Load``, ``Add``: childless,
        # so leaving them out moves no other node in the breadth-first order); only the fields
        # that can hold other nodes are read (``scopes.child_fields``: not ``ctx``, ``id``...).
        fields = fields_of(node.__class__)
        if fields is None:
            fields = child_fields(node.__class__)
        for field_name in fields:
            value = getattr(node, field_name, None)
            if value.__class__ is list:
                for child in value:
                    if isinstance(child, stmt):  # statements only ever stand in lists
                        start = child.lineno
                        for decorator in getattr(child, "decorator_list", ()):
                            start = min(start, decorator.lineno)
                        if start > last:
                            continue
                        if lines[bisect_left(lines, start)] > child.end_lineno:
                            continue
                        append(child)
                    elif isinstance(child, _AST) and child.__class__ not in leaves:
                        append(child)
            elif isinstance(value, _AST) and value.__class__ not in leaves:
                append(value)
    return uses


def _subclasses(*bases: type) -> frozenset[type]:
    found, stack = set(), list(bases)
    while stack:
        kind = stack.pop()
        found.add(kind)
        stack.extend(kind.__subclasses__())
    return frozenset(found)


# Childless nodes that say how a name is used or what an operator is, never a value.
_LEAF_TOKENS = _subclasses(ast.expr_context, ast.operator, ast.unaryop, ast.boolop, ast.cmpop)
_AST = ast.AST


# ``[n for n in ast.walk(node) if type(n) not in _LEAF_TOKENS]``: the tokens are what
# scopes.children leaves out (the ctx/op/ops fields), so its walk is this one.
_walk_without_leaf_tokens = walk_values


class Uses:
    """Where the file uses a name: the index the other questions look calls and reads up in."""

    @cached_property
    def nodes(self) -> list[ast.AST]:
        """Every node of the file but the expression contexts and operators (``Load``, ``Add``,
        ``Eq``...: leaves no scan asks about, a third of all nodes), in ``ast.walk``'s order: one
        walk, shared by the analyses and rules that scan the whole file (each walked it again)."""
        return _walk_without_leaf_tokens(self.ctx.tree)

    def _function_definitions(self, expr: ast.AST) -> list[ast.AST]:
        """The ``def``s the name ``expr`` may refer to (binding scope and definitions alone, so
        the same whenever asked). Remembered per use: ``function_transforms`` asks it of every
        call that passes a function's name, once per function of that name, and a test module
        has hundreds of functions named ``f`` and as many ``jax.jit(f)`` (7,800 questions on
        jax's tests for ~1,300 uses)."""
        if not isinstance(expr, ast.Name):
            return []
        found = self._definitions_of.get(expr)
        if found is None:
            scope = self.scopes.binding_scope(expr)
            found = self._definitions_of[expr] = [
                d.node
                for d in self.scopes.definitions(scope).get(expr.id, [])
                if isinstance(d.node, (ast.FunctionDef, ast.AsyncFunctionDef))
            ]
        return found

    def _index(self) -> dict[str, dict[str, list[ast.AST]]]:
        """Calls by the name of their first argument, of their function, of their method; and
        every read of a bare name: one walk of the file, on first use."""
        if self._usage is None:
            index: dict[str, dict[str, list[ast.AST]]] = {"first": {}, "func": {}, "method": {}, "load": {}}
            for node in self.nodes:
                if isinstance(node, ast.Call):
                    if node.args and isinstance(node.args[0], ast.Name):
                        index["first"].setdefault(node.args[0].id, []).append(node)
                    if isinstance(node.func, ast.Name):
                        index["func"].setdefault(node.func.id, []).append(node)
                    elif isinstance(node.func, ast.Attribute):
                        index["method"].setdefault(node.func.attr, []).append(node)
                elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                    index["load"].setdefault(node.id, []).append(node)
            self._usage = index
        return self._usage

    def _uses(self, name: str) -> dict[str, list[ast.AST]]:
        """``_index()`` for one identifier: its ``first``, ``func``, ``method`` and ``load``
        lists, the same nodes in the same order.

        Most files ask about a few names only, and a full index walks every node of the file
        (most of JAX002's time on jax's own sources): the first few names asked are looked up
        in the statements whose lines hold the name (``_uses_near``), the rest in the index.
        """
        if self._usage is None and name:
            found = self._usage_by_name.get(name)
            if found is not None:
                return found
            if (
                len(self._usage_by_name) < _NAMES_BEFORE_INDEX
                and self._spelled_as_parsed
            ):
                lines = name_lines(self.ctx.text, name)
                # Names on many lines (``f`` in a test file) keep most statements: walks that
                # near the whole tree cost more than indexing it once.
                spent = self._near_lines + len(lines)
                if spent * _NEAR_SHARE <= self._line_count:
                    self._near_lines = spent
                    found = self._usage_by_name[name] = _uses_on_lines(self.ctx.tree, name, lines)
                    return found
        index = self._index()
        return {key: index[key].get(name, []) for key in _USE_KINDS}

    @cached_property
    def _line_count(self) -> int:
        return self.ctx.text.count("\n") + 1

    @cached_property
    def _spelled_as_parsed(self) -> bool:
        """Every identifier is in the text as the tree names it, on the line the tree says
        (``spelled_as_parsed``)."""
        return spelled_as_parsed(self.ctx.text)

    def _calls_passing(self, name: str) -> list[ast.Call]:
        return self._uses(name)["first"]

    def instance_names(self, cls: str) -> list[str]:
        """The names that statements `name = <cls>(...)` bind, in any scope (`bridge = ToTorch()`)."""
        return [
            parent.targets[0].id
            for made in self._uses(cls)["func"]
            if (parent := self.ctx.parent(made)).__class__ is ast.Assign
            and len(parent.targets) == 1
            and parent.targets[0].__class__ is ast.Name
        ]

    def _instance_calls(self, cls: ast.ClassDef) -> list[ast.Call]:
        """The file's calls of an instance of ``cls`` it makes there: at once (`ToTorch()(x)`)
        or through the name it is bound to (`bridge = ToTorch()`, `bridge(x)`)."""
        calls = [
            parent for made in self._uses(cls.name)["func"]
            if (parent := self.ctx.parent(made)).__class__ is ast.Call and parent.func is made
        ]
        for name in self.instance_names(cls.name):
            calls += self._uses(name)["func"]
        return [
            call for call in dict.fromkeys(calls)
            if (value := self.value_of(call.func)).kind == INSTANCE and value.node is cls
        ]

    def _attribute_reads(self, attr: str) -> list[ast.Attribute]:
        """The reads ``x.<attr>`` of the file (calls' callees among them): one walk, on first use."""
        if self._attribute_index is None:
            index: dict[str, list[ast.Attribute]] = {}
            for node in self.nodes:
                if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                    index.setdefault(node.attr, []).append(node)
            self._attribute_index = index
        return self._attribute_index.get(attr, [])
