"""Containers and iteration (``values.Analysis``): tuple, list and dict displays, the writes into
a list or dict bound to a name (``out.append(v)``, ``d[k] = v``), subscripts, what an iteration
visits (a container's items, an instance's ``__iter__``/``__getitem__``), what ``with`` binds, and
a pytree's leaves."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING

from jax_codemod.analysis.scopes import Definition
from jax_codemod.analysis.values_facts import _WRITE_SPELLINGS
from jax_codemod.analysis.values_lattice import (
    ARRAY_KINDS,
    CONTAINER,
    INSTANCE,
    MAPPING,
    OTHER_ARRAYS,
    UNKNOWN,
    UNKNOWN_VALUE,
    Value,
    join,
)

if TYPE_CHECKING:
    from jax_codemod.analysis.values import Analysis


class Containers:
    """What a container holds, and what iterating, indexing or entering a value gives."""

    def _sequence_value(self, expr) -> Value:
        items = []
        starred = False
        for index, element in enumerate(expr.elts):
            if isinstance(element, ast.Starred):
                starred = True
                items.extend((None, v) for _, v in self.value_of(element.value).items)
            else:
                items.append(
                    (None if starred or isinstance(expr, ast.Set) else index, self.value_of(element))
                )
        return Value(CONTAINER, items=tuple(items))

    def _dict_value(self, expr: ast.Dict) -> Value:
        items = []
        for key, value in zip(expr.keys, expr.values, strict=True):
            if key is None:  # {**other}
                items.extend(self.value_of(value).items)
                continue
            constant = key.value if isinstance(key, ast.Constant) else None
            items.append((constant, self.value_of(value)))
        return Value(MAPPING, items=tuple(items))

    def _with_writes(self, definition: Definition, value: Value) -> Value:
        """A list or dict display bound to a name, with what the name's scope writes into it
        where that binding reaches: `out.append(v)`, `out.insert(i, v)`, `out.extend(vs)`,
        `d[k] = v`, `d.update(...)`, `d.setdefault(k, v)` (`outputs = []`, then a loop that
        appends a sharded batch to it, then an export of each). Writes of one key keep the
        weaker claim where they disagree, less a `None` placeholder (``element``)."""
        name, text = definition.name, self.ctx.text
        if not any(f"{name}{spelled}" in text for spelled in _WRITE_SPELLINGS) or definition.node in self._writing:
            return value
        self._writing.add(definition.node)
        try:
            # (the binding must reach the write: `out = []` again later is another list)
            return self._written_into(
                value, self._uses(name)["load"], lambda load: any(d.node is definition.node for d in self.scopes.reaching(load)[0])
            )
        finally:
            self._writing.discard(definition.node)

    def _written_into(self, value: Value, loads: Iterable[ast.expr], reaches=None) -> Value:
        """``value`` (a list's or dict's) with the items the writes around ``loads`` put in it
        (``reaches``: asked of a load that writes, whether it writes into this value)."""
        items = [
            item for load in loads
            if (written := self._written(load, value.kind)) and (reaches is None or reaches(load))
            for item in written
        ]
        return replace(value, items=(*value.items, *items)) if items else value

    def _written(self, load: ast.expr, kind: str) -> list[tuple[object, Value]]:
        """The items the write around ``load`` (a read of the list's or dict's name, or of
        `self.<attr>`) puts in it."""
        parent = self.ctx.parent(load)
        if parent.__class__ is ast.Subscript and parent.value is load and parent.ctx.__class__ is ast.Store:
            statement = self.ctx.parent(parent)
            key = parent.slice.value if parent.slice.__class__ is ast.Constant else None
            exact = statement.__class__ is ast.Assign and parent in statement.targets
            return [(key, self.value_of(statement.value) if exact else UNKNOWN_VALUE)]
        if parent.__class__ is not ast.Attribute or parent.value is not load:
            return []
        call = self.ctx.parent(parent)
        if call.__class__ is not ast.Call or call.func is not parent or any(a.__class__ is ast.Starred for a in call.args):
            return []
        method, args = parent.attr, call.args
        if kind == CONTAINER and method == "append" and len(args) == 1:
            return [(None, self.value_of(args[0]))]
        if kind == CONTAINER and method == "insert" and len(args) == 2:
            return [(None, self.value_of(args[1]))]
        if kind == CONTAINER and method == "extend" and len(args) == 1:
            return [(None, self.iterated(args[0]))]
        if kind == MAPPING and method == "setdefault" and len(args) == 2:
            return [(args[0].value if args[0].__class__ is ast.Constant else None, self.value_of(args[1]))]
        if kind == MAPPING and method == "update":
            found = [(k.arg, self.value_of(k.value)) for k in call.keywords if k.arg is not None]
            for arg in args:
                other = self.value_of(arg)
                found.extend(other.items if other.kind == MAPPING else [(None, UNKNOWN_VALUE)])
            return found
        return []

    def _entered(self, manager: Value, asynchronous: bool) -> Value:
        """What `with manager as name` binds: what the `__enter__` (`__aenter__`) of a project
        class returns, or what a `contextlib.contextmanager` generator yields (its call is the
        generator, ``_generated``)."""
        if manager.kind == INSTANCE:
            method = self._iteration_method(manager, "__aenter__" if asynchronous else "__enter__")
            if method is None:
                return UNKNOWN_VALUE
            owner, function = method
            return owner.arrived(owner.returns_of(function), self, function.lineno)
        if manager.kind == CONTAINER:
            return manager.element(None)
        return UNKNOWN_VALUE

    def _subscript_value(self, expr: ast.Subscript) -> Value:
        receiver = self.value_of(expr.value)
        if receiver.kind == INSTANCE:
            # `dataset[i]`: what its class's own `__getitem__` returns (a NamedTuple's fields else).
            found = self._item_of(receiver)
            if found is not None:
                return found
        if receiver.kind in (CONTAINER, MAPPING, INSTANCE):
            key = expr.slice
            if isinstance(key, ast.Constant):
                return receiver.element(key.value)
            if isinstance(key, ast.Slice):
                return receiver
            return receiver.element(None)
        if receiver.kind in ARRAY_KINDS | OTHER_ARRAYS:
            return receiver
        return UNKNOWN_VALUE

    def _iterated(self, value: Value) -> Value:
        """One element of iterating ``value``: a dict's keys, a list's items, an array's rows,
        what an instance's own ``__iter__`` gives (``_instance_iterated``)."""
        if value.kind == MAPPING:
            return UNKNOWN_VALUE
        if value.kind == INSTANCE:
            found = self._instance_iterated(value)
            if found is not None:
                return found
        return value.element(None)

    def _instance_iterated(self, instance: Value) -> Value | None:
        """An element of iterating an instance of a class of the project that defines how
        (`for batch in loader:` with `def __iter__(self): yield jax.device_put(...)`, here or in
        another module): what its `__iter__` (or `__aiter__`) yields, or the elements of the
        iterable it returns, or, where it returns the instance itself, what `__next__` (or
        `__anext__`) returns. None when its class defines none of them (a NamedTuple's fields
        are its elements)."""
        for name, following in (("__iter__", "__next__"), ("__aiter__", "__anext__")):
            method = self._iteration_method(instance, name)
            if method is not None:
                break
        else:
            # The sequence protocol: `for x in dataset` calls `__getitem__(0)`, `(1)`, ...
            return self._item_of(instance)
        owner, function = method
        returned = owner.returns_of(function)
        if returned.kind not in (UNKNOWN, INSTANCE):
            # Iterated where it is made: an element from another module is located there.
            return owner.arrived(owner._iterated(returned), self, function.lineno)
        # `return self` (an iterator of itself): each element is what `__next__` returns.
        method = self._iteration_method(instance, following)
        if method is None:
            return UNKNOWN_VALUE
        owner, function = method
        return owner.arrived(owner.returns_of(function), self, function.lineno)

    def _item_of(self, instance: Value) -> Value | None:
        """What the `__getitem__` of ``instance``'s class returns (any index), located where it
        is defined; None when its class defines none."""
        method = self._iteration_method(instance, "__getitem__")
        if method is None or isinstance(method[1], ast.AsyncFunctionDef):
            return None
        owner, function = method
        return owner.arrived(owner.returns_of(function), self, function.lineno)

    def _iteration_method(self, instance: Value, name: str) -> tuple[Analysis, ast.AST] | None:
        """The undecorated method ``name`` of ``instance``'s class (through its project bases),
        an `async def` included (`__aiter__` as an async generator, `__anext__`)."""
        found = self._class_member(instance, name, plain=False)
        if found is None:
            return None
        ctx, function = found
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or function.decorator_list:
            return None
        return ctx.analysis, function

    def _leaves(self, value: Value, depth: int = 0) -> Value:
        if value.kind in (CONTAINER, MAPPING, INSTANCE) and depth < 8:
            return join(self._leaves(v, depth + 1) for _, v in value.items)
        return value
