"""Attributes, instances and classes (``values.Analysis``): an attribute's value (an array's, an
instance's field, a class attribute, a property, a base class's member), the instances a
constructor call makes (record fields, ``self.x = x`` in ``__init__``), ``self`` in a record
class's methods, and the stores into an instance's field anywhere in the file."""

from __future__ import annotations

import ast
import bisect
import re
from dataclasses import replace
from typing import TYPE_CHECKING

from jax_codemod.analysis.classes import classes_for, statements
from jax_codemod.analysis.names import canonical, name_lines
from jax_codemod.analysis.scopes import scope_nodes
from jax_codemod.analysis.values_facts import _WRITE_SPELLINGS
from jax_codemod.analysis.values_lattice import (
    ARRAY_KINDS,
    CLASS,
    CONTAINER,
    INSTANCE,
    LIBRARY,
    MAPPING,
    MODULE,
    OTHER_ARRAYS,
    SHARDING,
    UNKNOWN,
    UNKNOWN_VALUE,
    Value,
    _field_join,
    _TooDeep,
    join,
    join_paths,
)

if TYPE_CHECKING:
    from jax_codemod.analysis.values import Analysis


ARRAY_ATTRIBUTES = frozenset({"T", "mT", "real", "imag"})


def _reads_attribute(expr: ast.AST, attr: str) -> bool:
    return any(isinstance(node, ast.Attribute) and node.attr == attr for node in ast.walk(expr))


class Objects:
    """What an attribute holds, and what instances of the project's classes are made of."""

    def _self_value(self, cls: ast.ClassDef, method: ast.AST) -> Value:
        """``self`` in a method of a record class (a NamedTuple, a dataclass): the instances the
        file reads the method of (``Batch(x=sharded).to_torch()``, ``f = batch.to_torch``), when
        each such read is on an instance of ``cls`` or on something known to be no instance of
        it; else any instance. A subclass's instances, or a dunder method that Python calls
        itself, could be ``self`` unseen: then any instance too."""
        plain = Value(INSTANCE, f"`{cls.name}`", node=cls, owner=self._here)
        if method.name.startswith("__") or self._record_fields(cls) is None or self._subclassed(cls):
            return plain
        found = self._self_values.get(method)
        if found is not None:
            return found
        self._self_values[method] = plain  # a method that reads itself on `self`
        try:
            instances = self._self_instances(cls, method)
        except _TooDeep:
            del self._self_values[method]
            raise
        found = self._self_values[method] = join_paths(instances) if instances else plain
        return found

    def _self_instances(self, cls: ast.ClassDef, method: ast.AST) -> list[Value]:
        """``_self_value``'s instances of ``cls`` read the method of; none when some read is on
        something that may be another instance."""
        instances = []
        for read in self._attribute_reads(method.name):
            receiver = self.value_of(read.value)
            if receiver.kind == INSTANCE and receiver.node is cls:
                instances.append(self._complete_instance(receiver, cls))
            elif receiver.kind in (MODULE, LIBRARY) or (
                receiver.kind in (INSTANCE, CLASS) and receiver.node not in (None, cls)
            ):
                continue  # another class's method of that name
            else:
                return []
        return instances

    def _complete_instance(self, value: Value, cls: ast.ClassDef) -> Value | None:
        """``value``, an instance of the record class ``cls``, with every field: a field its
        construction does not show (``State(*args)``, an annotated parameter) is what the class
        says of it, so that joined with other instances no field's claim rests on some of them
        only. None: ``value`` is no instance of ``cls`` held here."""
        if value.kind != INSTANCE or value.node is not cls or self._owner(value) is not self:
            return None
        shown = {key for key, _ in value.items}
        fields = self._record_fields(cls)
        missing = tuple((name, self._class_attribute(cls, name)) for name, _ in fields if name not in shown)
        return replace(value, items=value.items + missing) if missing else value

    def _subclassed(self, cls: ast.ClassDef) -> bool:
        """The file derives a class from ``cls`` (its name read among a class's bases)."""
        for name in self._uses(cls.name)["load"]:
            parent = self.ctx.parent(name)
            if isinstance(parent, ast.ClassDef) and name in parent.bases:
                return True
        return False


    def _attribute_value(self, expr: ast.Attribute) -> Value:
        qualified = self.qualname(expr)
        if qualified is not None:
            return self._qualified_value(qualified)
        receiver = self.value_of(expr.value)
        return self.attribute_of(receiver, expr.attr, expr)

    def attribute_of(self, receiver: Value, attr: str, node: ast.AST | None = None) -> Value:
        kind = receiver.kind
        if kind in ARRAY_KINDS:
            if attr in ARRAY_ATTRIBUTES or attr == "at":
                return receiver
            if attr == "sharding":
                return Value(SHARDING, receiver.why, placement=receiver.placement)
            return UNKNOWN_VALUE
        if kind in OTHER_ARRAYS:
            return receiver if attr in ARRAY_ATTRIBUTES or attr in ("data", "grad") else UNKNOWN_VALUE
        if kind == INSTANCE:
            # Each instance the receiver may be (``join_paths``): one whose field spans several
            # devices is one on which the read sees it.
            fields = [v for k, v in receiver.items if k == attr]
            if fields:
                fields = [join_paths(fields)]
            if isinstance(node, ast.Attribute):
                # `e.arr = other` anywhere in the file: `e.arr` may be either.
                fields += self.stored_fields(node.value, attr, receiver)
            if fields:
                return join(fields)
            owner = self._owner(receiver)
            if receiver.node is not None and owner is not None:
                found = owner._class_attribute(receiver.node, attr)
                if found.kind == UNKNOWN and not owner._binds(receiver.node, attr):
                    found = owner._inherited_attribute(receiver.node, attr)
                return owner.arrived(found, self)
            return UNKNOWN_VALUE
        if kind == CLASS and receiver.node is not None:
            owner = self._owner(receiver)
            if owner is None:
                return UNKNOWN_VALUE
            return owner.arrived(owner._class_attribute(receiver.node, attr, instance=False), self)
        if kind == MODULE and receiver.qualname:
            return self._qualified_value(canonical(f"{receiver.qualname}.{attr}"))
        return UNKNOWN_VALUE

    def _inherited_attribute(self, cls: ast.ClassDef, attr: str) -> Value:
        """``attr`` of an instance of ``cls`` that its own body and methods do not bind: what the
        first base of its method resolution order that does (a method, a field its `__init__`
        sets) gives, in the module that defines that base, this one or another of the project
        (``Classes.mro``: the bases as imported). Issue 54: `Child().shard(x)` with `shard`
        defined by a base class was unknown, in one module as across them."""
        classes = classes_for(self.ctx)
        if not isinstance(cls, ast.ClassDef) or not cls.bases:
            return UNKNOWN_VALUE
        for entry in classes.mro(cls)[1:]:
            place = classes._place(entry)
            if place is None:
                return UNKNOWN_VALUE  # a library base: what it binds is not this file's to say
            ctx, base = place
            analysis = ctx.analysis
            if analysis._binds(base, attr):
                return analysis.arrived(analysis._class_attribute(base, attr), self)
        return UNKNOWN_VALUE

    def _binds(self, cls: ast.ClassDef, attr: str) -> bool:
        """Whether ``cls`` itself binds ``attr`` for its instances: in its body, or as
        `self.<attr> = ...` in one of its methods (what it binds hides its bases' ``attr``)."""
        if attr in classes_for(self.ctx)._members_of(cls):
            return True
        for method in cls.body:
            if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
                positional = [*method.args.posonlyargs, *method.args.args]
                if positional and attr in self._self_assignments(method, positional[0].arg):
                    return True
        return False

    def _property_accessor(self, function: ast.AST) -> str | None:
        """"getter" for a method that is a property's getter alone (`@property`,
        `@functools.cached_property`, `@<name>.getter`), "other" for its setter or deleter (no
        value of the attribute), None for anything else (a method, or other decorators too)."""
        if isinstance(function, ast.AsyncFunctionDef) or len(function.decorator_list) != 1:
            return None
        decorator = function.decorator_list[0]
        if self.decorator_name(decorator) in ("property", "functools.cached_property"):
            return "getter"
        if isinstance(decorator, ast.Attribute) and isinstance(decorator.value, ast.Name) and decorator.value.id == function.name:
            return "getter" if decorator.attr == "getter" else "other" if decorator.attr in ("setter", "deleter") else None
        return None

    def stored_fields(self, receiver: ast.AST, attr: str, instance: Value | None = None) -> list[Value]:
        """What the file stores in ``<receiver>.<attr>`` (``receiver`` a name), anywhere: an
        instance's field written after it was built (``e.arr = np.ones(3)``). An augmented or
        unpacking store is unknown. The stores in the class of ``instance`` itself (``self.arr =
        arr`` in ``__init__``) are what its fields already say."""
        if not isinstance(receiver, ast.Name):
            return []
        # Most fields are never stored to from outside: the text says so before any walk (a
        # spelling that only may be a store, `f(e.arr, 1)`, costs the walk, never an answer).
        if not any(
            not (m.start() and (self.ctx.text[m.start() - 1].isalnum() or self.ctx.text[m.start() - 1] in "_."))
            for m in re.finditer(
                rf"{re.escape(receiver.id)}\s*\.\s*{re.escape(attr)}\b\s*(?:[-+*/%&|^@<>]{{0,2}}=(?!=)|[:,]|in\b)",
                self.ctx.text,
            )
        ):
            return []
        cls = instance.node if instance is not None and instance.owner in (None, self._here) else None
        index = self._field_stores
        if index is None:
            index = self._field_stores = {}
            # Statements only (no store is an expression's but a walrus's, which binds a name).
            for statement in statements(self.ctx.tree.body, into_classes=True, into_functions=True):
                if isinstance(statement, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                    targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
                    for target in targets:
                        if target.__class__ is ast.Name:
                            continue  # (most targets: no attribute in them)
                        for part in ast.walk(target):
                            if isinstance(part, ast.Attribute) and isinstance(part.value, ast.Name):
                                exact = isinstance(statement, ast.Assign) and target is part
                                value = statement.value if exact else None
                                index.setdefault((part.value.id, part.attr), []).append((statement, value))
                elif isinstance(statement, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith)):
                    targets = (
                        [statement.target]
                        if isinstance(statement, (ast.For, ast.AsyncFor))
                        else [i.optional_vars for i in statement.items if i.optional_vars is not None]
                    )
                    for target in targets:
                        if target.__class__ is ast.Name:
                            continue  # (most targets: no attribute in them)
                        for part in ast.walk(target):
                            if isinstance(part, ast.Attribute) and isinstance(part.value, ast.Name):
                                index.setdefault((part.value.id, part.attr), []).append((statement, None))
        stored = index.get((receiver.id, attr))
        if not stored:
            return []
        if isinstance(cls, ast.ClassDef):
            stored = [(s, v) for s, v in stored if not cls.lineno <= s.lineno <= cls.end_lineno]
        # Only where the name is the same variable: its own scope (an `e` of another function is
        # another `e`).
        scope = self.scopes.scope_of(receiver)
        stored = [(s, v) for s, v in stored if self.scopes.scope_of(s) is scope]
        return [UNKNOWN_VALUE if value is None else self.value_of(value) for _, value in stored]

    def _class_attribute(self, cls: ast.ClassDef, attr: str, instance: bool = True) -> Value:
        """``self.attr``: what the class body and its methods assign to it, joined. An update
        from the field itself (``self.state = self.state + action``) is read with the field as
        the other assignments make it (one round of a fixed point: a placement the update keeps
        stays, one it changes joins in)."""
        key = (cls, attr, instance)
        memo = self._class_attributes
        if key in memo:
            return memo[key]
        memo[key] = UNKNOWN_VALUE  # a cycle before the first round answers nothing
        try:
            found = memo[key] = self._class_attribute_read(cls, attr, instance, key)
        except _TooDeep:
            del memo[key]
            raise
        return found

    def _class_attribute_read(self, cls: ast.ClassDef, attr: str, instance: bool, key: tuple) -> Value:
        """``_class_attribute``'s answer, computed (it memoizes it under ``key``)."""
        memo = self._class_attributes
        known: list[Value] = []
        assigned: list[ast.expr] = []
        # A method assigns ``self.<attr>`` only where its lines spell ``attr``.
        lines = name_lines(self.ctx.text, attr) if instance and self._spelled_as_parsed else None
        for statement in cls.body:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if statement.name == attr:
                    accessor = self._property_accessor(statement) if instance else None
                    if accessor == "getter":
                        # `@property def batch(self): return jax.device_put(...)`: reading
                        # `obj.batch` runs it.
                        returned = self.returns_of(statement)
                        spelled = f"`{statement.name}()`"
                        if returned.why.startswith(spelled):
                            returned = replace(returned, why=f"the property `{statement.name}`{returned.why[len(spelled):]}")
                        known.append(returned)
                    elif accessor is None:
                        known.append(self._function_value(statement))
                    continue
                if not instance:
                    continue
                if lines is not None:
                    at = bisect.bisect_left(lines, statement.lineno)
                    if at == len(lines) or lines[at] > statement.end_lineno:
                        continue
                positional = [*statement.args.posonlyargs, *statement.args.args]
                if not positional:
                    continue
                assigned += self._self_assignments(statement, positional[0].arg).get(attr, ())
            elif isinstance(statement, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == attr for t in statement.targets
            ):
                assigned.append(statement.value)
            elif (
                isinstance(statement, ast.AnnAssign)
                and isinstance(statement.target, ast.Name)
                and statement.target.id == attr
            ):
                if statement.value is None:
                    annotated = self.annotation_value(statement.annotation)
                    source = self.ctx.source_of(statement.annotation)
                    known.append(replace(annotated, why=annotated.why or f"`{cls.name}.{attr}: {source}`"))
                else:
                    assigned.append(statement.value)
        updates = [e for e in assigned if _reads_attribute(e, attr)]
        values = known + [
            self._with_field_writes(cls, attr, e) if e.__class__ in (ast.List, ast.Dict) else self.value_of(e)
            for e in assigned if not any(e is u for u in updates)
        ]
        if updates:
            memo[key] = _field_join(values)
            values += [self.value_of(e) for e in updates]
        return _field_join(values)

    def _with_field_writes(self, cls: ast.ClassDef, attr: str, display: ast.expr) -> Value:
        """A list or dict display a method assigns to `self.<attr>`, with what the class's
        methods write into `self.<attr>` (``_written``: `self.items.append(placed)`)."""
        value = self.value_of(display)
        if value.kind not in (CONTAINER, MAPPING) or not any(f".{attr}{w}" in self.ctx.text for w in _WRITE_SPELLINGS):
            return value
        loads = []
        for method in cls.body:
            positional = [*method.args.posonlyargs, *method.args.args] if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) else []
            if not positional:
                continue
            this = positional[0].arg
            loads += [
                node for node in scope_nodes(method)
                if node.__class__ is ast.Attribute
                and node.attr == attr
                and node.value.__class__ is ast.Name
                and node.value.id == this
                and node.ctx.__class__ is ast.Load
            ]
        return self._written_into(value, loads)

    def _self_assignments(self, method: ast.AST, this: str) -> dict[str, list[ast.expr]]:
        """What ``method`` assigns to ``this.<attr>``, by attr, in ``scope_nodes``' order (one
        value per target): one walk of the method for all the attributes asked about."""
        found = self._assigned_attributes.get(method)
        if found is None:
            found = self._assigned_attributes[method] = {}
            for node in scope_nodes(method):
                if isinstance(node, ast.Assign):
                    targets = node.targets
                elif isinstance(node, ast.AnnAssign) and node.value is not None:
                    targets = [node.target]
                else:
                    continue
                for target in targets:
                    if (
                        isinstance(target, ast.Attribute)
                        and isinstance(target.value, ast.Name)
                        and target.value.id == this
                    ):
                        found.setdefault(target.attr, []).append(node.value)
        return found

    def _class_member(self, instance: Value, name: str, plain: bool = True):
        """(context, statement) binding ``name`` for ``instance``, through its class's project
        bases: a plain method (``Classes.method``), or any binding (``plain=False``)."""
        owner = self._owner(instance)
        if owner is None or not isinstance(instance.node, ast.ClassDef):
            return None
        classes = classes_for(owner.ctx)
        return classes.method(instance.node, name) if plain else classes.resolve(instance.node, name)

    def _instance(self, cls: ast.ClassDef, call: ast.Call, caller: Analysis | None = None) -> Value:
        """An instance of ``cls`` (this file's class) made by ``call`` (in ``caller``'s file)."""
        caller = caller or self
        fields = self._record_fields(cls)
        items = []
        if fields is not None:
            names = [name for name, _ in fields]
            given: dict[str, ast.AST] = {}
            for index, argument in enumerate(call.args):
                if isinstance(argument, ast.Starred):
                    given = {}
                    break
                if index < len(names):
                    given[names[index]] = argument
            for keyword in call.keywords:
                if keyword.arg is not None:
                    given[keyword.arg] = keyword.value
            for name, default in fields:
                if name in given:
                    items.append((name, caller.value_of(given[name])))
                elif default is not None:
                    items.append((name, self.value_of(default)))
        else:
            init = next(
                (s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None
            )
            if init is not None:
                items = self._init_fields(init, call, caller)
        return Value(INSTANCE, f"`{cls.name}`", items=tuple(items), node=cls, owner=self._here)

    def _init_fields(self, init: ast.FunctionDef, call: ast.Call, caller: Analysis) -> list:
        """``self.x = x`` in ``__init__``: the constructor's argument for ``x``."""
        positional = [a.arg for a in [*init.args.posonlyargs, *init.args.args]][1:]
        given: dict[str, ast.AST] = {}
        for index, argument in enumerate(call.args):
            if isinstance(argument, ast.Starred):
                return []
            if index < len(positional):
                given[positional[index]] = argument
        given.update({k.arg: k.value for k in call.keywords if k.arg is not None})
        this = init.args.args[0].arg if init.args.args else None
        items = []
        for statement in init.body:
            if (
                isinstance(statement, ast.Assign)
                and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Attribute)
                and isinstance(statement.targets[0].value, ast.Name)
                and statement.targets[0].value.id == this
                and isinstance(statement.value, ast.Name)
                and statement.value.id in given
            ):
                items.append((statement.targets[0].attr, caller.value_of(given[statement.value.id])))
        return items

    def _record_fields(self, cls: ast.ClassDef) -> list[tuple[str, ast.AST | None]] | None:
        """The fields of a dataclass or NamedTuple, in order; None for other classes."""
        record = any(
            (self.qualname(d.func if isinstance(d, ast.Call) else d) or "").endswith("dataclass")
            for d in cls.decorator_list
        ) or any(
            (self.qualname(base) or "") in ("typing.NamedTuple", "flax.struct.PyTreeNode")
            or (self.qualname(base) or "").endswith(".NamedTuple")
            for base in cls.bases
        )
        if not record:
            return None
        return [
            (statement.target.id, statement.value)
            for statement in cls.body
            if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)
        ]
