"""The classes of one file and where a method call through `self` or `super()` goes: for a
class, the classes of the file it derives from, those that derive from it, its method
resolution order within the file, and the methods a name resolves to there.

``classes_for(ctx)`` returns the file's ``Classes``, built once per ``FileContext`` (on first
use: only a traced method that calls through `self` asks). The API:

- ``owner(method)``: the class whose body defines ``method`` directly, or None;
- ``bases(cls)``: its bases, each a class of the file (a name that a module-level `class`
  defined earlier binds, and nothing else at module level does) or, for any other base
  (`nn.Module`, `Generic[T]`, an imported class), its source text: opaque;
- ``mro(cls)``: its method resolution order (C3), opaque bases as single entries;
  ``subclasses(cls)``: the module-level classes of the file whose order holds it;
- ``lookup(cls, name, after=None)``: the plain method `name` resolves to on an instance of
  ``cls`` (``after``: past that class of the order, as `super()` in it looks), or None when
  the name is something else there (an attribute, a static or decorated method, a property)
  or the order reaches an opaque base first (what that defines is unknown);
- ``called(method, func)``: the plain methods a call of ``func`` (`self.hook`,
  `super().hook`, `super(Owner, self).hook`) inside ``method`` may run: `self.hook` runs the
  owner's `hook` and, on an instance of a subclass of the file that inherits ``method``, that
  subclass's; `super().hook` runs what each of those orders has past the owner.

A class nested in a function or in another class has its own body only: none of its bases is
followed and no class of the file derives from it (what `self.hook` finds there is what the
class itself defines).

Across modules (issue 34): a base imported from another module of the project (the value
analysis says it is a class there) is a ``Foreign`` entry of the order, followed into that
module's own hierarchy. ``lookup`` and ``definition`` stop at it as at an opaque base (what they
return is always a node of this file); ``resolve`` goes on through it, and ``foreign_bases``,
``called_across`` and ``inherited`` answer the questions that cross the boundary.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from jax_codemod.analysis.names import canonical

if TYPE_CHECKING:
    from jax_codemod.analysis.context import FileContext

# Decorators that return the function itself: a method with only these is a plain one.
TRANSPARENT = frozenset(
    # flax linen's `compact` and `nowrap` mark a Module's method; it runs with the arguments given.
    {"typing.override", "typing_extensions.override", "flax.linen.compact", "flax.linen.nowrap"}
)
# Decorators that make a method no method of the instance (its first parameter is no `self`).
_NOT_BOUND = frozenset({"staticmethod", "classmethod"})
_ABSENT = object()  # a class body that does not bind the name
_UNKNOWN = "?"  # the order past a class whose bases C3 cannot merge (Python raises there)
_BODIES = ("body", "orelse", "finalbody", "handlers")
# The statements (and except clauses) that hold statements.
_COMPOUND = frozenset(
    kind
    for kind in vars(ast).values()
    if isinstance(kind, type)
    and issubclass(kind, (ast.stmt, ast.excepthandler))
    and {*_BODIES, "cases"} & set(kind._fields)
)


@dataclass(frozen=True, eq=False)
class Foreign:
    """A class of another module of the project in an order: its module's context and node."""

    ctx: FileContext
    node: ast.ClassDef

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Foreign) and other.node is self.node

    def __hash__(self) -> int:
        return id(self.node)


def classes_for(ctx: FileContext) -> Classes:
    """The file's one ``Classes`` (kept on the context, as ``tracing_for`` keeps its answer)."""
    found = ctx.__dict__.get("_classes")
    if found is None:
        found = ctx.__dict__["_classes"] = Classes(ctx)
    return found


def statements(body: list[ast.stmt], into_classes: bool = False, into_functions: bool = False):
    """The statements of ``body`` and of the compound statements in it (`if`, `try`, `with`,
    `for`, `match`), not those of the functions and classes it defines unless ``into_functions``
    and ``into_classes`` (expressions are never walked: a lambda holds no statement)."""
    stack = list(reversed(body))
    while stack:
        node = stack.pop()
        yield node
        if node.__class__ not in _COMPOUND:
            continue  # most statements hold none (an assignment, a call, a return)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not into_functions:
            continue
        if isinstance(node, ast.ClassDef) and not into_classes:
            continue
        for name in _BODIES:
            stack.extend(reversed([child for child in getattr(node, name, ()) if isinstance(child, ast.AST)]))
        for case in getattr(node, "cases", ()):
            stack.extend(reversed(case.body))


def _bound_names(node: ast.stmt) -> list[str]:
    """The names a statement binds in the body that holds it."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [(alias.asname or alias.name).split(".")[0] for alias in node.names]
    targets = []
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor)):
        targets = [node.target]
    elif isinstance(node, (ast.With, ast.AsyncWith)):
        targets = [item.optional_vars for item in node.items if item.optional_vars is not None]
    if len(targets) == 1 and targets[0].__class__ is ast.Name:
        return [targets[0].id]  # most: `x = ...` (ast.walk's answer, without the walk)
    return [name.id for target in targets for name in ast.walk(target) if isinstance(name, ast.Name)]


class Classes:
    """The class hierarchy of one file. Use ``classes_for(ctx)``."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self._mro: dict[ast.ClassDef, list] = {}
        self._members: dict[ast.ClassDef, dict[str, object]] = {}
        self._subclasses: dict[ast.ClassDef, list[ast.ClassDef]] = {}

    @cached_property
    def _owners(self) -> dict[ast.AST, ast.ClassDef]:
        """Each method's class, nested classes' too (built on first need: most files that
        ask anything of their classes ask it of few, or none)."""
        owners = {}
        if "class" not in self.ctx.text:
            return owners
        for node in statements(self.ctx.tree.body, into_classes=True, into_functions=True):
            if isinstance(node, ast.ClassDef):
                for member in node.body:
                    if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        owners[member] = node
        return owners

    @cached_property
    def _module(self) -> dict[str, ast.ClassDef]:
        """Module-level classes by name, where nothing else at module level binds the name."""
        tree = self.ctx.tree
        if not any(isinstance(node, ast.ClassDef) for node in tree.body):
            return {}
        bindings: dict[str, int] = {}
        for node in statements(tree.body):
            for name in _bound_names(node):
                bindings[name] = bindings.get(name, 0) + 1
        return {node.name: node for node in tree.body if isinstance(node, ast.ClassDef) and bindings.get(node.name) == 1}

    def owner(self, method: ast.AST) -> ast.ClassDef | None:
        return self._owners.get(method)

    def bases(self, cls: ast.ClassDef) -> list[ast.ClassDef | Foreign | str]:
        module_level = self._module.get(cls.name) is cls
        found: list[ast.ClassDef | Foreign | str] = []
        for base in cls.bases:
            if isinstance(base, ast.Name) and module_level:
                known = self._module.get(base.id)
                if known is not None and known.lineno < cls.lineno:
                    found.append(known)
                    continue
                if base.id == "object" and "object" not in self._module:
                    continue
            foreign = self._foreign(base) if module_level else None
            found.append(foreign if foreign is not None else ast.unparse(base))
        return found

    def _foreign(self, base: ast.expr) -> Foreign | None:
        """A base that another module of the project defines (``from .base import Trainer``)."""
        if self.ctx.project is None or not isinstance(base, (ast.Name, ast.Attribute)):
            return None
        value = self.ctx.analysis.value_of(base)
        if value.kind != "class" or not isinstance(value.node, ast.ClassDef) or value.owner in (None, self.ctx.root_path):
            return None
        owner = self.ctx.project.context(value.owner)
        return Foreign(owner, value.node) if owner is not None else None

    def mro(self, cls: ast.ClassDef) -> list[ast.ClassDef | Foreign | str]:
        found = self._mro.get(cls)
        if found is None:
            self._mro[cls] = [cls, _UNKNOWN]  # a cycle through other modules' classes
            try:
                bases = self.bases(cls)
                # (Bases are defined earlier in the file: no class is its own ancestor.)
                merged = _c3([self._order(b) for b in bases] + [list(bases)])
            except BaseException:
                # The value analysis unwinds a question cut at its depth (values._TooDeep) and
                # asks it again: the placeholder is no answer then.
                del self._mro[cls]
                raise
            found = self._mro[cls] = [cls, *(merged if merged is not None else [_UNKNOWN])]
        return found

    def _order(self, base: ast.ClassDef | Foreign | str) -> list:
        if isinstance(base, ast.ClassDef):
            return self.mro(base)
        if isinstance(base, Foreign):
            theirs = classes_for(base.ctx).mro(base.node)
            return [Foreign(base.ctx, entry) if isinstance(entry, ast.ClassDef) else entry for entry in theirs]
        return [base]

    # Across modules --------------------------------------------------------------------

    def foreign_bases(self, cls: ast.ClassDef) -> list[Foreign]:
        """The classes of other modules in ``cls``'s order."""
        return [entry for entry in self.mro(cls) if isinstance(entry, Foreign)]

    def resolve(self, cls: ast.ClassDef, name: str) -> tuple[FileContext, ast.stmt] | None:
        """The statement that binds ``name`` for an instance of ``cls``, through the classes of
        other modules too, with the context of the module that holds it; None when unknown."""
        for entry in self.mro(cls):
            place = self._place(entry)
            if place is None:
                return None
            ctx, node = place
            member = classes_for(ctx)._members_of(node).get(name, _ABSENT)
            if member is not _ABSENT:
                return (ctx, member) if member is not None else None
        return None

    def _place(self, entry: ast.ClassDef | Foreign | str) -> tuple[FileContext, ast.ClassDef] | None:
        """An entry of ``mro``: (the context of the module that defines it, its class); None for
        a class outside the project."""
        if isinstance(entry, ast.ClassDef):
            return self.ctx, entry
        if isinstance(entry, Foreign):
            return entry.ctx, entry.node
        return None

    def method(self, cls: ast.ClassDef, name: str) -> tuple[FileContext, ast.FunctionDef] | None:
        """The plain method ``name`` of an instance of ``cls`` (``resolve``), with the context of
        the module that defines it; None when it is unknown, not a method, or decorated."""
        found = self.resolve(cls, name)
        if found is None or not classes_for(found[0])._plain(found[1]):
            return None
        return found  # type: ignore[return-value]

    def library_bases(self, cls: ast.ClassDef) -> frozenset[str]:
        """The qualified names of the bases, outside the project, of ``cls`` and of its
        ancestors in the project (`flax.linen.Module`)."""
        found = set()
        for ctx, node in filter(None, map(self._place, self.mro(cls))):
            for base in node.bases:
                qualified = ctx.qualname(base)
                if qualified is not None:
                    found.add(canonical(qualified))
        return frozenset(found)

    def called_across(self, method: ast.AST, func: ast.AST) -> list[tuple[FileContext, ast.FunctionDef]]:
        """The plain methods of other modules' classes a call `self.hook(...)` inside ``method``
        runs on an instance of its class (``called`` answers for this file's)."""
        owner = self.owner(method)
        if (
            owner is None
            or not isinstance(func, ast.Attribute)
            or not _bound_self(method)
            or not isinstance(func.value, ast.Name)
            or func.value.id != (method.args.posonlyargs + method.args.args)[0].arg
        ):
            return []
        found = self.resolve(owner, func.attr)
        if found is None or found[0] is self.ctx or not classes_for(found[0])._plain(found[1]):
            return []
        return [found]

    def subclasses(self, cls: ast.ClassDef) -> list[ast.ClassDef]:
        found = self._subclasses.get(cls)
        if found is None:
            found = self._subclasses[cls] = [
                other for other in self._module.values() if other is not cls and cls in self.mro(other)
            ]
        return found

    def lookup(
        self, cls: ast.ClassDef, name: str, after: ast.ClassDef | None = None
    ) -> ast.FunctionDef | None:
        found = self.definition(cls, name, after)
        return found if found is not None and self._plain(found) else None

    def definition(self, cls: ast.ClassDef, name: str, after: ast.ClassDef | None = None) -> ast.stmt | None:
        """The statement of a class body that binds ``name`` for an instance of ``cls`` (``lookup``,
        decorated methods and other bindings included); None when unknown."""
        order = self.mro(cls)
        start = order.index(after) + 1 if after is not None and after in order else 0
        for entry in order[start:]:
            if not isinstance(entry, ast.ClassDef):
                return None  # an opaque base: what it defines is unknown
            member = self._members_of(entry).get(name, _ABSENT)
            if member is not _ABSENT:
                return member
        return None

    def _members_of(self, cls: ast.ClassDef) -> dict[str, object]:
        """Name -> the statement of the class body that binds it, or None when that is not one
        statement directly in the body."""
        found = self._members.get(cls)
        if found is None:
            found = self._members[cls] = {}
            direct = set(map(id, cls.body))
            for node in statements(cls.body):
                for name in _bound_names(node):
                    found[name] = node if name not in found and id(node) in direct else None
        return found

    def _plain(self, node: ast.AST) -> bool:
        """A method of the instance with its function as written: no decorator but ``TRANSPARENT``."""
        if not isinstance(node, ast.FunctionDef) or not node.args.posonlyargs + node.args.args:
            return False
        return all(canonical(self.ctx.qualname(d)) in TRANSPARENT for d in node.decorator_list)

    def called(self, method: ast.AST, func: ast.AST) -> list[ast.FunctionDef]:
        """The plain methods a call of ``func`` inside ``method`` may run (module docstring)."""
        owner = self.owner(method)
        if owner is None or not isinstance(func, ast.Attribute) or not _bound_self(method):
            return []
        me = (method.args.posonlyargs + method.args.args)[0].arg
        receiver = func.value
        if isinstance(receiver, ast.Name) and receiver.id == me:
            found = [self.lookup(owner, func.attr)]
            for subclass in self.subclasses(owner):
                if self.definition(subclass, method.name) is method:  # it runs on a subclass instance
                    found.append(self.lookup(subclass, func.attr))
        elif _is_super(receiver, owner, me):
            found = [self.lookup(k, func.attr, after=owner) for k in (owner, *self.subclasses(owner))]
        else:
            return []
        return list(dict.fromkeys(m for m in found if m is not None))


def _bound_self(method: ast.AST) -> bool:
    """Whether ``method``'s first parameter is the instance (no `staticmethod` or `classmethod`)."""
    if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    if not method.args.posonlyargs + method.args.args:
        return False
    return not any(isinstance(d, ast.Name) and d.id in _NOT_BOUND for d in method.decorator_list)


def _is_super(expr: ast.AST, owner: ast.ClassDef, me: str) -> bool:
    """`super()` or `super(Owner, self)`."""
    if not (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "super"):
        return False
    if expr.keywords:
        return False
    if not expr.args:
        return True
    return (
        len(expr.args) == 2
        and isinstance(expr.args[0], ast.Name)
        and expr.args[0].id == owner.name
        and isinstance(expr.args[1], ast.Name)
        and expr.args[1].id == me
    )


def _c3(sequences: list[list]) -> list | None:
    """The C3 merge of ``sequences`` (Python's method resolution order); None when there is none."""
    sequences = [list(s) for s in sequences if s]
    merged = []
    while sequences:
        for sequence in sequences:
            head = sequence[0]
            if not any(head in other[1:] for other in sequences):
                break
        else:
            return None
        merged.append(head)
        sequences = [s[1:] if s[0] == head else s for s in sequences]
        sequences = [s for s in sequences if s]
    return merged
