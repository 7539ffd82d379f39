"""The project's other modules (``values.Analysis``, issue 34): a value found in another module is
handed over located there (``arrived``); a qualified name of the project is that module's own
answer, through re-exports; and the function or method of the project a call runs
(``callee``), with what the call passes."""

from __future__ import annotations

import ast
from dataclasses import replace
from functools import cached_property
from typing import TYPE_CHECKING

from jax_codemod.analysis import api
from jax_codemod.analysis.classes import classes_for
from jax_codemod.analysis.names import canonical
from jax_codemod.analysis.transforms import Transform
from jax_codemod.analysis.values_facts import DL_DEVICE_TYPES, TRACING_TRANSFORMS, WRAPPING_TRANSFORMS
from jax_codemod.analysis.values_lattice import (
    ARRAY,
    CAPSULE,
    CONTAINER,
    DEVICE_TYPE,
    FUNCTION,
    INSTANCE,
    LIBRARY,
    MAPPING,
    MESH,
    MODULE,
    SHARDING,
    TRACER,
    TRANSFORM,
    UNKNOWN_VALUE,
    Callee,
    Value,
    join,
)

if TYPE_CHECKING:
    from jax_codemod.analysis.values import Analysis


# Re-exports followed from a module's text before one is parsed (`pkg.f` -> `pkg.core.f`).
MAX_REEXPORTS = 8


# Library base classes whose instances run their own methods (``api`` ``applies``): the
# method's name -> {the class's qualified name: that method's own keywords}.
_APPLIERS: dict[str, dict[str, tuple[str, ...]]] = {}
for _record in api.records(applies=True):
    _APPLIERS.setdefault(_record.applies, {})[_record.name] = _record.apply_options
# Kinds whose reason a finding quotes: located in their module when they come from another.
_LOCATED = frozenset({ARRAY, TRACER, CAPSULE, SHARDING, MESH})


def _is_module_name(qualified: str) -> bool:
    return qualified in _KNOWN_MODULES


_KNOWN_MODULES = frozenset(
    {
        "jax.numpy",
        "jax.dlpack",
        "jax.lax",
        "jax.nn",
        "jax.random",
        "jax.sharding",
        "jax.experimental",
        "jax.experimental.pjit",
        "jax.experimental.multihost_utils",
        "jax.experimental.mesh_utils",
        "jax.tree_util",
        "jax.tree",
        "jax.scipy",
        "jax.typing",
        "torch.utils",
        "torch.utils.dlpack",
        "numpy.typing",
        "jax._src",
        "jax._src.dlpack",
    }
)


class Project:
    """Values across the project's modules, and the project's function a call runs."""


    def foreign_callee(self, call: ast.Call) -> tuple[Analysis, ast.AST, bool] | None:
        """The function or method of another module of the project that ``call`` runs: (that
        module's analysis, its ``def``, whether the call binds its first parameter, as a method
        called on an instance does); None for anything else (this file's functions included:
        their parameters are followed from their callers here)."""
        func = call.func
        if not isinstance(func, (ast.Name, ast.Attribute)):
            return None
        callee = self.value_of(func)
        if callee.kind != FUNCTION or callee.owner is None or callee.owner == self._here:
            return None
        return self._function_callee(func, callee)

    def _function_callee(self, func: ast.expr, callee: Value) -> tuple[Analysis, ast.AST, bool] | None:
        owner = self._owner(callee)
        function = callee.node
        if owner is None or not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        if any(owner._caches(d) for d in function.decorator_list):
            # A cached function hashes its arguments first (a JAX array, a tracer: TypeError):
            # what it returns is known, what it does with an argument is not followed.
            return None
        bound = False
        if isinstance(func, ast.Attribute) and isinstance(owner.ctx.parent(function), ast.ClassDef):
            decorators = {owner.decorator_name(d) for d in function.decorator_list}
            if "classmethod" in decorators:
                bound = True
            elif "staticmethod" not in decorators:
                bound = self.value_of(func.value).kind == INSTANCE
        return owner, function, bound

    def callee(self, call: ast.Call) -> Callee | None:
        """The function or method of the project (this module's or another's) that ``call``
        runs, with what it passes: a function (`helper(x)`, `interop.to_host(x)`), a method of
        an instance (`model.encode(x)`, `Model().encode(x)`), an instance's `__call__`
        (`model(x)`), and the method a library base class's method runs on the instance
        (``api`` ``applies``: flax's `model.apply(variables, x, method=Model.encode)` runs
        `encode(x)`, without `method=` `__call__`). None for anything else."""
        func = call.func
        if not isinstance(func, (ast.Name, ast.Attribute, ast.Call)):
            return None
        value = self.value_of(func)
        if value.kind == FUNCTION and value.node is not None and not isinstance(func, ast.Call):
            found = self._function_callee(func, value)
            return Callee(*found, call.args, call.keywords) if found is not None else None
        if value.kind == INSTANCE:
            return self._method_callee(value, "__call__", call.args, call.keywords)
        if isinstance(func, ast.Attribute) and func.attr in _APPLIERS and call.args:
            receiver = self.value_of(func.value)
            if receiver.kind == INSTANCE:
                return self._applied_callee(receiver, func.attr, call)
        return None

    def _method_callee(self, instance: Value, name: str, args, keywords) -> Callee | None:
        """The plain method ``name`` of ``instance``'s class (through its project bases)."""
        found = self._class_member(instance, name)
        if found is None:
            return None
        ctx, function = found
        return Callee(ctx.analysis, function, True, list(args), list(keywords))

    def instance_call(self, expr: ast.AST) -> Callee | None:
        """The `__call__` that ``expr``, an instance of a class of the project, runs when it is
        called (`jax.vmap(model)(xs)`): it gets the call's arguments."""
        if not isinstance(expr, (ast.Name, ast.Attribute, ast.Call)):
            return None
        value = self.value_of(expr)
        return self._method_callee(value, "__call__", [], []) if value.kind == INSTANCE else None

    def applied_method(self, expr: ast.AST) -> Callee | None:
        """The method that ``expr``, a library base class's ``applies`` method of an instance
        (`model.apply`, not called: `jax.jit(model.apply)`), runs when called without `method=`:
        its `__call__`, which gets the call's arguments after the first (the variables)."""
        if not isinstance(expr, ast.Attribute) or expr.attr not in _APPLIERS:
            return None
        receiver = self.value_of(expr.value)
        if receiver.kind != INSTANCE or self._apply_options(receiver, expr.attr) is None:
            return None
        return self._method_callee(receiver, "__call__", [], [])

    def _apply_options(self, instance: Value, applier: str) -> tuple[str, ...] | None:
        """The keywords of the library method ``applier`` by which ``instance``'s class runs its
        own methods (``_APPLIERS``); None when its class has no such base, or defines
        ``applier`` itself."""
        owner = self._owner(instance)
        cls = instance.node
        if owner is None or not isinstance(cls, ast.ClassDef):
            return None
        classes = classes_for(owner.ctx)
        if classes.resolve(cls, applier) is not None:
            return None  # the project's own `apply`: a method like any other
        bases = classes.library_bases(cls)
        return next((options for name, options in _APPLIERS[applier].items() if name in bases), None)

    def _applied_callee(self, instance: Value, applier: str, call: ast.Call) -> Callee | None:
        options = self._apply_options(instance, applier)
        if options is None or isinstance(call.args[0], ast.Starred):
            return None  # `model.apply(*args)`: which argument is the variables is not known
        method = "__call__"
        for keyword in call.keywords:
            if keyword.arg == "method":
                chosen = keyword.value
                if isinstance(chosen, ast.Constant) and isinstance(chosen.value, str):
                    method = chosen.value
                elif isinstance(chosen, ast.Attribute):
                    method = chosen.attr  # `Model.encode`, `self.encode`: looked up on the instance
                else:
                    return None  # a function or an expression: what runs is not known here
        keywords = [k for k in call.keywords if k.arg not in options]
        return self._method_callee(instance, method, call.args[1:], keywords)


    @cached_property
    def _here(self) -> str | None:
        """This module's path under its project root: the owner of the values made here."""
        return self.ctx.root_path

    def _owner(self, value: Value) -> Analysis | None:
        """The analysis that holds ``value``'s nodes: this one, or another module's of the
        project (None when that module is no longer readable for this file)."""
        if value.owner is None or value.owner == self._here:
            return self
        project = self.ctx.project
        other = project.context(value.owner) if project is not None else None
        return other.analysis if other is not None else None

    def arrived(self, value: Value, asking: Analysis, line: int | None = None) -> Value:
        """``value``, as this module's analysis found it, handed to ``asking`` (the module that
        asked): marked as held here, and its reason located here (``line``: where it is made) for
        a finding's message."""
        if asking is self:
            return value
        if value.owner is None and (value.node is not None or value.transform is not None):
            value = replace(value, owner=self._here)
        return self._located(value, line, 0)

    def _located(self, value: Value, line: int | None, depth: int) -> Value:
        """``value`` with its reason, and those of the items it holds, located in this module."""
        if value.why and value.kind in _LOCATED and "` line " not in value.why and f"in `{self._here}`" not in value.why:
            where = f"`{self._here}` line {line}" if line else f"`{self._here}`"
            value = replace(value, why=f"{value.why}, in {where}")
        if value.kind in (CONTAINER, MAPPING) and value.items and depth < 3:
            items = tuple((key, self._located(item, None, depth + 1)) for key, item in value.items)
            if any(new is not old for (_, new), (_, old) in zip(items, value.items)):
                value = replace(value, items=items)
        return value

    def _project_value(self, qualified: str) -> Value | None:
        """What ``qualified`` is, when it names something in another module of the project:
        that module's own answer (None: not the project's, the caller judges it as a library)."""
        project = self.ctx.project
        found = project.module_of(qualified, self._here)
        if found is None:
            return None
        path, rest = found
        if not rest:
            return Value(MODULE, qualname=qualified)  # a module of the project: nothing to parse
        # A re-export (`from .core import f` in a package's `__init__`) is followed from the text:
        # the module that defines the name is the only one parsed.
        for _ in range(MAX_REEXPORTS):
            target = project.reexport(path, rest[0])
            if target is None:
                break
            name = ".".join([target, *rest[1:]])
            moved = project.module_of(name, path)
            if moved is None:  # re-exported from a library: judged as that library's name
                return self._qualified_value(canonical(name))
            path, rest = moved
            if not rest:
                return Value(MODULE, qualname=name)
        guard = project.asking(path)
        other = project.context(path) if guard is not None else None
        if other is None:
            return UNKNOWN_VALUE
        with guard:
            analysis = other.analysis
            definitions = analysis.scopes.definitions(other.tree).get(rest[0], [])
            value = join(analysis._definition_value(d) for d in definitions) if definitions else UNKNOWN_VALUE
            for attr in rest[1:]:
                value = analysis.attribute_of(value, attr)
            line = getattr(definitions[-1].node, "lineno", None) if definitions and len(rest) == 1 else None
            return analysis.arrived(value, self, line)

    def _qualified_value(self, qualified: str) -> Value:
        if self.ctx.project is not None:
            found = self._project_value(qualified)
            if found is not None:
                return found
        if qualified in WRAPPING_TRANSFORMS or qualified in TRACING_TRANSFORMS:
            return Value(TRANSFORM, f"`{qualified}`", transform=Transform(qualified, why=""))
        owner, _, member = qualified.rpartition(".")
        if owner.rpartition(".")[2] == "DLDeviceType" and member in DL_DEVICE_TYPES:
            return Value(DEVICE_TYPE, f"`{qualified}`", constant=DL_DEVICE_TYPES[member], qualname=qualified)
        if "." not in qualified or _is_module_name(qualified):
            return Value(MODULE, qualname=qualified)
        return Value(LIBRARY, f"`{qualified}`", qualname=qualified)
