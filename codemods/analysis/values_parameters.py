"""Parameters and annotations (``values.Analysis``): what a parameter holds, from its traced
transform, its annotation, the file's calls that pass it, a dispatch registration, ``self`` in a
method, or ``jax.tree.map``; what an annotation says a value is."""

from __future__ import annotations

import ast
from dataclasses import replace

from jax_codemod.analysis import api
from jax_codemod.analysis.classes import classes_for
from jax_codemod.analysis.expected_errors import expected_errors_of
from jax_codemod.analysis.scopes import function_of
from jax_codemod.analysis.values_facts import SHARDING_TYPES, _is_none, _returns_its_argument
from jax_codemod.analysis.values_lattice import (
    ARRAY,
    ARRAY_KINDS,
    CAPSULE,
    CLASS,
    CONTAINER,
    DEVICE,
    INSTANCE,
    MAPPING,
    MESH,
    MULTI,
    NOT_ADDRESSABLE,
    NUMPY,
    OTHER_ARRAYS,
    SHARDING,
    SINGLE,
    TORCH,
    TRACER,
    UNKNOWN,
    UNKNOWN_VALUE,
    Value,
    join,
    join_paths,
)

JAX_ARRAY_TYPES = api.public_names(array_type="jax")
MAPPING_TYPES = frozenset(
    {"dict", "typing.Dict", "typing.Mapping", "collections.abc.Mapping", "typing.MutableMapping"}
)
SEQUENCE_TYPES = frozenset(
    {"list", "tuple", "typing.List", "typing.Tuple", "typing.Sequence", "collections.abc.Sequence"}
)
TORCH_TYPES = api.public_names(array_type="torch")
NUMPY_TYPES = api.public_names(array_type="numpy")
CAPSULE_TYPES = frozenset({"types.CapsuleType", "typing_extensions.CapsuleType"})
DEVICE_TYPES = frozenset({"jax.Device", "jaxlib.xla_client.Device", "jax.lib.xla_client.Device"})


# The base that makes a class a structural type (``Analysis._protocol``).
_PROTOCOLS = frozenset({"typing.Protocol", "typing_extensions.Protocol"})


class Parameters:
    """What a parameter holds, and what an annotation says."""

    def _argument_value(self, parameter: ast.arg, function: ast.AST) -> Value:
        """What the file's own calls of ``function`` pass for ``parameter``, joined; unknown
        unless every use of the function is such a call."""
        passed = self._passed_values(parameter, function)
        return join_paths(passed) if passed else UNKNOWN_VALUE

    def _passed_values(self, parameter: ast.arg, function: ast.AST) -> list[Value]:
        """``_argument_value``'s values, one per call (empty: unknown)."""
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or not all(
            _returns_its_argument(v, self._owner(v)) for v in map(self.value_of, function.decorator_list)
        ):
            return []
        owner = self.ctx.parent(function)
        positional = [*function.args.posonlyargs, *function.args.args]
        if isinstance(owner, ast.ClassDef) and function.name == "__init__":
            # Constructor calls; the class name also appears in annotations and isinstance checks.
            calls = [
                call
                for call in self._uses(owner.name)["func"]
                if self.value_of(call.func).kind == CLASS and self.value_of(call.func).node is owner
            ]
            positional = positional[1:]
        elif isinstance(owner, ast.ClassDef) and function.name == "__call__":
            calls = self._instance_calls(owner)
            positional = positional[1:]
        elif isinstance(owner, ast.ClassDef):
            calls = [
                call
                for call in self._uses(function.name)["method"]
                if self.value_of(call.func.value).kind == INSTANCE
                and self.value_of(call.func.value).node is owner
            ]
            positional = positional[1:]
        else:
            uses = self._uses(function.name)["load"]
            calls = [
                c
                for c in self._uses(function.name)["func"]
                if function in self._function_definitions(c.func)
            ]
            if len(calls) != len(uses):
                return []  # passed or stored somewhere: other callers are unknown
        if not calls:
            return []
        defaults = dict(
            zip([a.arg for a in reversed(positional)], reversed(function.args.defaults), strict=False)
        )
        defaults.update(
            (a.arg, d)
            for a, d in zip(function.args.kwonlyargs, function.args.kw_defaults, strict=True)
            if d is not None
        )
        values = []
        for call in calls:
            if any(isinstance(a, ast.Starred) for a in call.args) or any(
                k.arg is None for k in call.keywords
            ):
                return []
            argument = next((k.value for k in call.keywords if k.arg == parameter.arg), None)
            if argument is None and parameter in positional and positional.index(parameter) < len(call.args):
                argument = call.args[positional.index(parameter)]
            if argument is None:
                argument = defaults.get(parameter.arg)
            if argument is None:
                return []
            values.append(self.value_of(argument))
        several = [v.placement in (MULTI, NOT_ADDRESSABLE) for v in values]
        if any(several) and not all(several):
            # A call a test expects to fail (`with pytest.raises(BufferError):
            # to_torch(sharded)`) says nothing of what the function is given where it works
            # (asked only where it decides: ``join_paths`` would keep that call's array).
            expected = expected_errors_of(self.ctx)
            working = [value for value, call in zip(values, calls, strict=True) if not expected.expects_at(call)]
            values = working or values
        return values


    def parameter_value(self, parameter: ast.arg) -> Value:
        passed = self._parameters.get(parameter)
        if passed is not None:
            return passed
        function = function_of(self.ctx, parameter)
        if function is None:
            return UNKNOWN_VALUE
        arguments = function.args
        if parameter in (arguments.vararg, arguments.kwarg):
            return UNKNOWN_VALUE
        if self.tracing.traced_parameter(parameter, function):
            return Value(TRACER, f"a parameter of a traced function (`{parameter.arg}`)")
        if parameter.annotation is not None and not self._protocol(self.annotation_value(parameter.annotation)):
            annotated = self.annotation_value(parameter.annotation)
            if annotated.kind == INSTANCE:
                annotated = self._passed_instances(parameter, function, annotated)
            if annotated.kind == ARRAY:
                dispatched = self._dispatched(parameter, function)
                if dispatched is not None:
                    return dispatched
            if annotated.kind != UNKNOWN:
                return replace(
                    annotated, why=f"a parameter annotated `{self.ctx.source_of(parameter.annotation)}`"
                )
        else:
            # Arrays and placements only: a constant some caller passes (a dl_device) says nothing
            # of what callers elsewhere pass, and a fix built on it could break them.
            passed = self._argument_value(parameter, function)
            if self._leaves(passed).kind in ARRAY_KINDS | OTHER_ARRAYS | {SHARDING, DEVICE, MESH}:
                return replace(passed, why=f"{passed.why}, passed to `{function.name}`" if passed.why else "")
            if passed.kind == INSTANCE and not isinstance(self.ctx.parent(function), ast.ClassDef):
                # Instances of one class of the file, every call's (`export(state)`): their
                # fields, as the calls made them (`state.params`).
                return self._passed_instance(parameter, function, passed)
        if self._registered_for_jax(parameter, function):
            return self._dispatched(parameter, function) or Value(ARRAY, "a function registered for `jax.Array`")
        owner = self.ctx.parent(function)
        positional = [*arguments.posonlyargs, *arguments.args]
        if (
            isinstance(owner, ast.ClassDef)
            and positional
            and positional[0] is parameter
            and not any(self.decorator_name(d) == "staticmethod" for d in function.decorator_list)
        ):
            if any(self.decorator_name(d) == "classmethod" for d in function.decorator_list):
                return Value(CLASS, f"class `{owner.name}`", node=owner, owner=self._here)
            return self._self_value(owner, function)
        mapped = self._mapped_parameter(parameter, function)
        if mapped is not None:
            return mapped
        return UNKNOWN_VALUE

    def _passed_instances(self, parameter: ast.arg, function: ast.AST, annotated: Value) -> Value:
        """A parameter annotated with a record class of the file (``def export(s: State)``):
        the instances the file's calls pass (``export(State(sharded))``), when every call
        passes one of that class; else what the annotation says (an instance, fields unknown).
        Not a method's: its calls on receivers the file does not know are not counted."""
        if annotated.node is None or self._record_fields(annotated.node) is None:
            return annotated
        if isinstance(self.ctx.parent(function), ast.ClassDef):
            return annotated
        passed = self._passed_values(parameter, function)
        complete = [self._complete_instance(v, annotated.node) for v in passed]
        if not complete or None in complete:
            return annotated
        return join_paths(complete)

    def _passed_instance(self, parameter: ast.arg, function: ast.AST, passed: Value) -> Value:
        """``passed``, joined from the file's calls of ``function``, where each passed an
        instance of the same class of this module; else unknown."""
        values = self._passed_values(parameter, function)
        cls = passed.node
        if not isinstance(cls, ast.ClassDef) or any(
            v.kind != INSTANCE or v.node is not cls or self._owner(v) is not self for v in values
        ):
            return UNKNOWN_VALUE
        return passed

    def _mapped_parameter(self, parameter: ast.arg, function: ast.AST) -> Value | None:
        """A parameter of a function that ``jax.tree.map`` applies to a tree's leaves."""
        positional = [*function.args.posonlyargs, *function.args.args]
        if not positional or positional[0] is not parameter:
            return None
        calls = []
        if isinstance(function, ast.Lambda):
            parent = self.ctx.parent(function)
            if isinstance(parent, ast.Call) and parent.args and parent.args[0] is function:
                calls.append(parent)
        else:
            calls = [
                c
                for c in self._calls_passing(function.name)
                if function in self._function_definitions(c.args[0])
            ]
        trees = [
            call.args[1] for call in calls if len(call.args) > 1 and self.qualname(call.func) in api.TREE_MAPS
        ]
        if not trees or len(trees) != len(calls):
            return None
        return join_paths(self.leaves(tree) for tree in trees)

    def _registered_for_jax(self, parameter: ast.arg, function: ast.AST) -> bool:
        """The first parameter of ``@dispatcher.register(jax.Array)``."""
        positional = [*function.args.posonlyargs, *function.args.args]
        if not positional or positional[0] is not parameter:
            return False
        return any(
            isinstance(d, ast.Call)
            and isinstance(d.func, ast.Attribute)
            and d.func.attr == "register"
            and len(d.args) == 1
            and self.annotation_value(d.args[0]).kind == ARRAY
            for d in getattr(function, "decorator_list", ())
        )

    def _protocol(self, annotated: Value) -> bool:
        """Whether ``annotated`` (an annotation's value) is an instance of a `typing.Protocol`
        class of the project: it says only what the argument can do, so a parameter annotated
        with it is read as unannotated, from what the calls pass (issue 54: the Protocol hid the
        concrete class the calls pass)."""
        owner = self._owner(annotated) if annotated.kind == INSTANCE else None
        if owner is None or not isinstance(annotated.node, ast.ClassDef):
            return False
        return bool(classes_for(owner.ctx).library_bases(annotated.node) & _PROTOCOLS)

    def _dispatched(self, parameter: ast.arg, function: ast.AST) -> Value | None:
        """The first parameter of an overload for JAX arrays (`@to_torch.register(jax.Array)`,
        or `@to_torch.register` with `x: jax.Array`): the JAX arrays the file's calls of the
        dispatcher pass (`to_torch(batch)`; a call with another kind runs another overload),
        joined along their paths; None when no call passes one. Issue 54: the overload's
        parameter was a JAX array of unknown placement, so a sharded batch exported there got
        no JAX002 finding."""
        positional = [*function.args.posonlyargs, *function.args.args]
        if not positional or positional[0] is not parameter:
            return None
        dispatchers = [
            d.func if isinstance(d, ast.Call) else d
            for d in getattr(function, "decorator_list", ())
        ]
        dispatchers = [d.value for d in dispatchers if isinstance(d, ast.Attribute) and d.attr == "register"]
        if len(dispatchers) != 1 or not isinstance(dispatchers[0], ast.Name):
            return None
        name = dispatchers[0].id
        definitions = self._function_definitions(dispatchers[0])
        if not definitions or not all(
            any(self.decorator_name(d) == "functools.singledispatch" for d in getattr(f, "decorator_list", ()))
            for f in definitions
        ):
            return None  # another registry's `register`: its calls need not run this overload
        passed = [
            self.value_of(call.args[0])
            for call in self._uses(name)["func"]
            if call.args and not isinstance(call.args[0], ast.Starred)
            and self._function_definitions(call.func) == definitions
        ]
        arrays = [v for v in passed if v.kind == ARRAY]
        if not arrays:
            return None
        found = join_paths(arrays)
        return replace(found, why=f"{found.why}, passed to `{name}`" if found.why else f"a JAX array passed to `{name}`")

    def annotation_value(self, annotation: ast.AST) -> Value:
        """What a value annotated ``annotation`` is; base classes (``Sharding``) say little."""
        parsed = False
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            try:
                annotation = ast.parse(annotation.value, mode="eval").body
            except SyntaxError:
                return UNKNOWN_VALUE
            parsed = True  # nodes outside the tree: no scope resolves their names
        if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
            members = [m for m in (annotation.left, annotation.right) if not _is_none(m)]
            return join(self.annotation_value(m) for m in members) if members else UNKNOWN_VALUE
        if isinstance(annotation, ast.Subscript):
            head = self.qualname(annotation.value)
            if (
                head is None
                and isinstance(annotation.value, ast.Name)
                and not self.ctx.is_bound(annotation.value.id)
            ):
                head = annotation.value.id  # a builtin: dict[str, jax.Array]
            inner = annotation.slice
            members = inner.elts if isinstance(inner, ast.Tuple) else [inner]
            if head in MAPPING_TYPES and len(members) == 2:
                return Value(MAPPING, items=((None, self.annotation_value(members[1])),))
            if head in SEQUENCE_TYPES and members:
                elements = [m for m in members if not (isinstance(m, ast.Constant) and m.value is Ellipsis)]
                return Value(CONTAINER, items=tuple((None, self.annotation_value(m)) for m in elements))
            if head in ("typing.Optional", "typing_extensions.Optional"):
                return self.annotation_value(inner)
            if head in ("typing.Union",) and isinstance(inner, ast.Tuple):
                members = [m for m in inner.elts if not _is_none(m)]
                return join(self.annotation_value(m) for m in members)
            if head in ("typing.Annotated",) and isinstance(inner, ast.Tuple):
                return self.annotation_value(inner.elts[0])
            if head and head.startswith("jaxtyping.") and isinstance(inner, ast.Tuple) and inner.elts:
                return self.annotation_value(inner.elts[0])
            if head in NUMPY_TYPES:
                return Value(NUMPY)
            return UNKNOWN_VALUE
        if isinstance(annotation, ast.Name) and not parsed:
            # A class of this file (`batch: Batch`): its fields' annotations say what
            # `batch.obs` is, as a constructor call's arguments would.
            named = self.value_of(annotation)
            if named.kind == CLASS and named.node is not None:
                return Value(INSTANCE, f"`{named.node.name}`", node=named.node, owner=self._here)
        qualified = self.qualname(annotation)
        if qualified is None:
            return UNKNOWN_VALUE
        if qualified in JAX_ARRAY_TYPES:
            return Value(ARRAY)
        if qualified in TORCH_TYPES:
            return Value(TORCH)
        if qualified in NUMPY_TYPES:
            return Value(NUMPY)
        if qualified in CAPSULE_TYPES:
            return Value(CAPSULE, producer="parameter")
        if qualified in SHARDING_TYPES:
            return Value(SHARDING, placement=SHARDING_TYPES[qualified])
        if qualified in DEVICE_TYPES:
            return Value(DEVICE, placement=SINGLE)
        return UNKNOWN_VALUE

    def _is_parameter(self, expr: ast.AST) -> bool:
        if not isinstance(expr, ast.Name):
            return False
        reaching, _complete = self.scopes.reaching(expr)
        if reaching:
            return False
        parameter = self.scopes.parameter(expr.id, self.scopes.scope_of(expr))
        return parameter is not None

    def parameter_source(self, expr: ast.AST) -> ast.arg | None:
        """The parameter ``expr`` holds as its function received it: the parameter's name, or a
        local name bound only to it (``y = x``), never rebound in between."""
        for _ in range(8):
            if not isinstance(expr, ast.Name):
                return None
            reaching, complete = self.scopes.reaching(expr)
            if not reaching:
                return self.scopes.parameter(expr.id, self.scopes.scope_of(expr))
            if len(reaching) != 1 or not complete or reaching[0].path or not isinstance(reaching[0].value, ast.Name):
                return None
            expr = reaching[0].value
        return None
