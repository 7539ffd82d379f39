"""What each expression of a file holds, and why: the one value analysis every rule queries.

``analysis_for(ctx)`` (also ``ctx.analysis``) returns the file's ``Analysis``, built at most
once per ``FileContext`` and lazily: nothing is computed until a rule asks, and each answer
is memoized. The API (stable; add, don't rename):

- ``value_of(expr) -> Value``: the value's ``kind`` (``ARRAY``, ``TRACER``, ``TORCH``,
  ``NUMPY``, ``CUPY``, ``CAPSULE``, ``DEVICE_TYPE``, ``DLPACK_DEVICE``, ``CALLABLE``,
  ``TRANSFORM``, ``SHARDING``, ``DEVICE``, ``MESH``, ``PARTITION_SPEC``, ``CONTAINER``,
  ``MAPPING``, ``INSTANCE``, ``CLASS``, ``FUNCTION``, ``MODULE``, ``LIBRARY``,
  ``CONSTANT`` or ``UNKNOWN``), its ``placement`` for arrays, tracers and shardings
  (``SINGLE``, ``MULTI``, ``NOT_ADDRESSABLE`` or ``PLACEMENT_UNKNOWN``), a capsule's
  ``producer`` (``"jax"``, ``"torch"``, ``"cupy"``, ``"numpy"``, ``"parameter"``,
  ``"unknown"``), a callable's ``transform``, a constant's or device type's ``constant``,
  the ``qualname`` of a module or library object, and ``why``: a short origin for messages
  ("`jax.device_put` with a multi-device sharding").
- ``transform_of(expr) -> Transform | None``: the JAX transform an expression applies or
  has applied: ``jax.jit``, ``partial(jax.jit, static_argnames=...)``, an alias of either
  (``fast = partial(jax.jit, ...)``), a decorator factory (``def jit_with(**kw): return
  partial(jax.jit, **kw)``), a jitted function or method, an element of a dict of jitted
  functions. ``Transform.name`` is the public qualified name (``jax.jit``, ``jax.pmap``,
  ``jax.shard_map``, ``jax.vmap``, ...), ``Transform.options`` its keywords, and
  ``Transform.function`` the function it wraps when the file defines it.
- ``function_transforms(def) -> list[Transform]``: the transforms a ``def`` is traced under,
  from its decorators and from calls such as ``jax.jit(step)`` in the file; ``tracing``: the
  file's ``analysis.tracing.Tracing``, which answers it and every other question about what
  runs in a trace (traced functions and helpers, traced parameters, a function's taint).
- ``is_tracer(expr)``, ``placement(expr)``, ``leaves(expr)`` (a pytree's leaves, joined),
  ``returns_of(def)``, ``qualname(expr)`` (the file's one resolver, ``analysis.names``: the
  canonical name through imports, local aliases, ``importlib.import_module("jax.dlpack")`` and
  ``getattr(jax.dlpack, "to_dlpack")``, knowing that a local binding shadows an import).

Flows followed within the file: the definitions that reach a use (``scopes``), tuple
unpacking, ``for`` targets over lists, dicts, ``.items()`` and ``.values()``, literals,
comprehensions and their subscripts, dataclass and NamedTuple instances and their fields,
``self.attr`` set in methods, return values of the file's functions and methods, parameter
annotations (``jax.Array``, ``jnp.ndarray``, jaxtyping ``Float[Array, "b"]``, ``torch.Tensor``,
``np.ndarray``), ``isinstance`` and ``match`` narrowing, parameters of functions passed to
``jax.tree.map``, and explicit-sharding mode (``jax.set_mesh``), under which JAX's creation
and computation results live on the mesh. Also (issue 34): ``partial(jax.device_put, ...)``
aliases, ``jax.device_put`` of a tree (each leaf by the matching sharding leaf), what a
generator yields (``for``, ``async for``, ``next``), the dicts and records a ``pmap`` or
``shard_map`` function returns, ``self`` in a record class's methods (the instances the file
reads the method of) and a parameter annotated with a record class (the instances its calls
pass). When possibilities disagree the weaker claim wins, with one exception (``join_paths``):
a JAX array on several devices along one path to a use (a definition that reaches it, a return,
a call that passes it, an element an iteration visits) is one there, since an export raises on
that path. Writes that do not exclude each other (every `e.arr = ...`, a global's assignments)
keep the weaker claim.

The class answers each question in a module of its own (issue 54), composed here as mixins:
``values_index`` (where a name is used), ``values_names`` (names and definitions),
``values_containers`` (containers and iteration), ``values_calls`` (calls and returns),
``values_parameters`` (parameters and annotations), ``values_objects`` (attributes, instances
and classes), ``values_library`` (library calls), ``values_placements`` (placements) and
``values_project`` (the project's other modules), over ``values_lattice`` (``Value``, kinds,
placements, joins) and ``values_facts`` (the tables they share). This module keeps the
evaluation (``value_of``: memo, depth and budget) and re-exports every name it had before.
"""

from __future__ import annotations

import ast
import bisect  # noqa: F401 (re-exported)
import copy
import re  # noqa: F401 (re-exported)
import weakref
from collections.abc import Iterable  # noqa: F401 (re-exported)
from dataclasses import dataclass, field, replace  # noqa: F401 (re-exported)
from functools import cached_property

from jax_codemod.analysis import api  # noqa: F401 (re-exported)
from jax_codemod.analysis.classes import classes_for, statements  # noqa: F401 (re-exported)
from jax_codemod.analysis.expected_errors import expected_errors_of  # noqa: F401 (re-exported)
from jax_codemod.analysis.guards import isinstance_classes  # noqa: F401 (re-exported)
from jax_codemod.analysis.names import Resolver, canonical, name_lines, spelled_as_parsed  # noqa: F401 (re-exported)
from jax_codemod.analysis.scopes import (  # noqa: F401 (re-exported)
    CHILD_FIELDS,
    ENTER,
    ITER,
    Definition,
    Scopes,
    ancestors,
    child_fields,
    function_of,
    scope_nodes,
    walk_values,
)
from jax_codemod.analysis.tracing import Tracing, tracing_for
from jax_codemod.analysis.transforms import Transform
from jax_codemod.analysis.values_calls import (  # noqa: F401 (re-exported)
    _ITERATION_BUILTINS,
    _SPECIALIZING,
    ARRAY_METHODS,
    GATHER_HELPER,
    JIT_TRANSFORMS,
    MAX_SPECIALIZED,
    MULTI_TRANSFORMS,
    Calls,
    _array_leaves,
    call_arguments,
)
from jax_codemod.analysis.values_containers import Containers
from jax_codemod.analysis.values_facts import (  # noqa: F401 (re-exported)
    _MESH_MAKERS,
    _WRITE_SPELLINGS,
    DL_DEVICE_TYPES,
    SHARDING_TYPES,
    TRACING_TRANSFORMS,
    WRAPPING_TRANSFORMS,
    _argument,
    _constant_strs,
    _inspects,
    _is_literal,
    _is_none,
    _is_partial_put,
    _names_read,
    _returns_its_argument,
)
from jax_codemod.analysis.values_index import (  # noqa: F401 (re-exported)
    _AST,
    _LEAF_TOKENS,
    _NAMES_BEFORE_INDEX,
    _NEAR_SHARE,
    _USE_KINDS,
    Uses,
    _subclasses,
    _uses_near,
    _uses_on_lines,
    _walk_without_leaf_tokens,
)
from jax_codemod.analysis.values_lattice import (  # noqa: F401 (re-exported)
    _DEFS,
    _ON_ONE_PATH,
    _PATH_COMPANIONS,
    _RANK,
    ARRAY,
    ARRAY_KINDS,
    CALLABLE,
    CAPSULE,
    CLASS,
    CONSTANT,
    CONTAINER,
    CUPY,
    DEVICE,
    DEVICE_TYPE,
    DLPACK_DEVICE,
    FUNCTION,
    INSTANCE,
    LIBRARY,
    MAPPING,
    MESH,
    MODULE,
    MULTI,
    NOT_ADDRESSABLE,
    NUMPY,
    OTHER_ARRAYS,
    PARTITION_SPEC,
    PLACEMENT_UNKNOWN,
    SHARDING,
    SINGLE,
    TORCH,
    TRACER,
    TRANSFORM,
    UNKNOWN,
    UNKNOWN_VALUE,
    Callee,
    Unfinished,
    Value,
    _field_join,
    _keyed,
    _same_positions,
    _shaped,
    _TooDeep,
    join,
    join_paths,
)
from jax_codemod.analysis.values_library import (  # noqa: F401 (re-exported)
    _TEST_RANDOM_FACTORIES,
    _TORCH_NON_TENSORS,
    ARRAY_MODULES,
    CAPSULE_PRODUCERS,
    COPIES,
    HOST_PRODUCERS,
    KEEPS_TRACERS,
    MULTI_PRODUCERS,
    NOT_ADDRESSABLE_PRODUCERS,
    NOT_ARRAYS,
    PARTIAL,
    SHARDED_BY_ARGUMENT,
    SINGLE_PRODUCERS,
    TREE_CALLS,
    TREE_FLATTEN,
    TREE_FLATTEN_WITH_PATH,
    TREE_LEAVES,
    TREE_LEAVES_WITH_PATH,
    Library,
    _with_leaves,
)
from jax_codemod.analysis.values_names import (  # noqa: F401 (re-exported)
    _RETURNING_DECORATORS,
    Names,
)
from jax_codemod.analysis.values_objects import (  # noqa: F401 (re-exported)
    ARRAY_ATTRIBUTES,
    Objects,
    _reads_attribute,
)
from jax_codemod.analysis.values_parameters import (  # noqa: F401 (re-exported)
    _PROTOCOLS,
    CAPSULE_TYPES,
    DEVICE_TYPES,
    JAX_ARRAY_TYPES,
    MAPPING_TYPES,
    NUMPY_TYPES,
    SEQUENCE_TYPES,
    TORCH_TYPES,
    Parameters,
)
from jax_codemod.analysis.values_placements import (  # noqa: F401 (re-exported)
    _DTYPE_KEYWORDS,
    _DTYPE_POSITIONS,
    CREATION,
    MESH_CONTEXTS,
    Placements,
    _constant_ints,
    _keyword_name,
    _one_device,
    _placement_free,
)
from jax_codemod.analysis.values_project import (  # noqa: F401 (re-exported)
    _APPLIERS,
    _KNOWN_MODULES,
    _LOCATED,
    MAX_REEXPORTS,
    Project,
    _is_module_name,
)

# How many evaluations one question may stack before it is cut (``Analysis.value_of``): the
# Python stack, not the answer, is what this bounds. A cut is no answer: the question is asked
# again once the expression cut is answered from the top (``_from_top``), up to ``MAX_ROUNDS``
# times, so a variable reassigned hundreds of times in a row, or through hundreds of branches,
# keeps its placement. Past that the function is reported as not fully checked (``unfinished``).
MAX_DEPTH = 40
MAX_ROUNDS = 400


def analysis_for(ctx) -> Analysis:
    """The file's one analysis, however many rules ask (cached on the context)."""
    return ctx.analysis


class Analysis(Uses, Names, Containers, Calls, Parameters, Objects, Library, Placements, Project):
    """The value analysis of one file. Use ``analysis_for(ctx)``; never build one per rule."""

    # The values of parameters given by one call (``specialized``); none for a file's own analysis.
    _parameters: dict[ast.arg, Value] = {}

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.scopes = Scopes(ctx)
        self._values: dict[ast.AST, Value] = {}
        self._active: set[ast.AST] = set()
        # Past the budget: a cut answers unknown instead of unwinding (``_from_top``).
        self._cut_quietly = False
        # The questions given up on (``unfinished``); shared with the ``specialized`` copies.
        self._unfinished: list[Unfinished] = []
        self._returns: dict[ast.AST, Value] = {}
        self._usage: dict[str, dict[str, list[ast.AST]]] | None = None
        self._usage_by_name: dict[str, dict[str, list[ast.AST]]] = {}
        self._near_lines = 0  # lines the per-name look-ups have kept, all names together
        self._multi_process: bool | None = None
        self._mesh_statements: list[ast.AST] | None = None
        self._assigned_attributes: dict[ast.AST, dict[str, list[ast.expr]]] = {}
        self._definitions_of: dict[ast.AST, list[ast.AST]] = {}
        self._blocks: dict[int, tuple] = {}  # id(statement list) -> _early_exits (and the list, kept alive)
        self._self_values: dict[ast.AST, Value] = {}  # method -> `self` (_self_value)
        self._attribute_index: dict[str, list[ast.Attribute]] | None = None
        self._field_stores: dict[tuple[str, str], list[tuple[ast.stmt, ast.expr | None]]] | None = None
        self._writing: set[ast.AST] = set()  # the definitions whose writes are being read (_with_writes)
        self._class_attributes: dict[tuple[ast.ClassDef, str, bool], Value] = {}

    # Public queries ------------------------------------------------------------------

    def value_of(self, expr: ast.AST | None) -> Value:
        if expr is None:
            return UNKNOWN_VALUE
        found = self._values.get(expr)
        if found is not None:
            return found
        if expr in self._active:
            return UNKNOWN_VALUE
        if len(self._active) > MAX_DEPTH:
            if self._cut_quietly:
                return UNKNOWN_VALUE
            raise _TooDeep(expr)
        if not self._active:
            return self._from_top(expr)
        return self._evaluated(expr)

    def _evaluated(self, expr: ast.AST) -> Value:
        self._active.add(expr)
        try:
            found = self._value(expr)
        finally:
            self._active.discard(expr)
        self._values[expr] = found
        return found

    def _from_top(self, expr: ast.AST) -> Value:
        """``expr``'s value, asked with nothing else being evaluated. Each cut unwinds to here
        (nothing below it was memoized: it rested on the cut); the expression cut is answered
        first, from the top, with the whole depth again, and the question asked again. A chain
        of ``x = x * k`` is so answered a few dozen links at a time, iteratively, each link
        once."""
        pending, rounds = [expr], 0
        while pending:
            try:
                found = self._evaluated(pending[-1])
            except _TooDeep as cut:
                rounds += 1
                if rounds <= MAX_ROUNDS and cut.expr not in pending:
                    pending.append(cut.expr)
                    continue
                return self._given_up(expr)
            pending.pop()
        return found

    def _given_up(self, expr: ast.AST) -> Value:
        """Past ``MAX_ROUNDS`` (or a cut that needs itself): ``expr`` as far as ``MAX_DEPTH``
        shows, deeper questions answered unknown, and the function noted as not fully checked."""
        function = next((a for a in ancestors(self.ctx, expr) if isinstance(a, _DEFS)), None)
        name = getattr(function, "name", None)
        entry = Unfinished(getattr(expr, "lineno", None) or getattr(function, "lineno", 0), name)
        if all(e.function != name for e in self._unfinished):
            self._unfinished.append(entry)
        self._cut_quietly = True
        try:
            return self._evaluated(expr)
        finally:
            self._cut_quietly = False

    @property
    def unfinished(self) -> list[Unfinished]:
        """The questions given up on past the budget, one per function: a rule's silence there
        is no proof (the engine reports the file as not fully checked)."""
        return list(self._unfinished)

    def placement(self, expr: ast.AST) -> str:
        return self.value_of(expr).placement

    def is_tracer(self, expr: ast.AST) -> bool:
        return self.value_of(expr).kind == TRACER

    def transform_of(self, expr: ast.AST) -> Transform | None:
        value = self.value_of(expr)
        return value.transform if value.kind in (CALLABLE, TRANSFORM) else None

    def leaves(self, expr: ast.AST) -> Value:
        return self._leaves(self.value_of(expr))

    def iterated(self, expr: ast.AST) -> Value:
        """One element of iterating ``expr`` (``for x in expr``, ``map(f, expr)``), joined."""
        return self._iterated(self.value_of(expr))

    @cached_property
    def names(self) -> Resolver:
        """The file's resolver (``analysis.names``), with scopes and values to follow."""
        # Through a weak reference: bound methods kept here would make the analysis a cycle
        # that holds the whole tree until the cyclic collector walks it (the engine relies on
        # reference counting to free each file's tree when the file is done).
        analysis = weakref.ref(self)
        return Resolver(
            self.ctx._bindings,
            lambda name: analysis()._module_level(name),
            lambda name: analysis()._holds(name),
        )

    def qualname(self, expr: ast.AST) -> str | None:
        """The public qualified name ``expr`` refers to, or None (``names.Resolver.qualname``)."""
        return self.names.qualname(expr)

    def _module_level(self, name: ast.Name) -> bool:
        return self.scopes.binding_scope(name) is self.ctx.tree

    def _holds(self, name: ast.Name) -> str | None:
        value = self.value_of(name)
        return value.qualname if value.kind in (MODULE, LIBRARY) else None

    @property
    def tracing(self) -> Tracing:
        """The file's tracing answer (``analysis.tracing``): which functions run under which
        transform, which parameters are traced, the local taint of a traced function."""
        return tracing_for(self.ctx)

    def function_transforms(self, function: ast.AST) -> list[Transform]:
        """Transforms ``function`` runs under: its decorators, and calls that pass it to one
        (``Tracing.function_transforms``)."""
        return self.tracing.function_transforms(function)

    @property
    def spellings(self):
        """How the file spells transforms (``analysis.transforms``): equinox and flax ones,
        factories that take the function (``def jit(fn=None, **kw)``), substituted options."""
        return self.tracing.spellings

    def applied_transform(self, expr: ast.AST) -> Transform | None:
        """The transform ``expr`` applies when called on a function (``jax.jit``,
        ``partial(jax.jit, ...)``, an alias or factory result), not a transformed function."""
        value = self.value_of(expr)
        return value.transform if value.kind == TRANSFORM else None

    def calls_passing(self, name: str) -> list[ast.Call]:
        """The calls whose first argument is the bare name ``name``."""
        return self._calls_passing(name)

    def function_definitions(self, expr: ast.AST) -> list[ast.AST]:
        """The ``def``s the name ``expr`` may refer to."""
        return self._function_definitions(expr)

    @staticmethod
    def transform_from_spelling(spelled, function: ast.AST) -> Transform:
        """A transform as ``Spellings`` reads a decorator, canonically named, applied to ``function``."""
        return Transform(canonical(spelled.name), spelled.options, function=function)

    # Expressions ---------------------------------------------------------------------

    def _value(self, expr: ast.AST) -> Value:
        if isinstance(expr, ast.Name):
            return self._name_value(expr)
        if isinstance(expr, ast.Call):
            return self._call_value(expr)
        if isinstance(expr, ast.Attribute):
            return self._attribute_value(expr)
        if isinstance(expr, ast.Subscript):
            return self._subscript_value(expr)
        if isinstance(expr, ast.Constant):
            return Value(CONSTANT, constant=expr.value)
        if isinstance(expr, (ast.Tuple, ast.List, ast.Set)):
            return self._sequence_value(expr)
        if isinstance(expr, ast.Dict):
            return self._dict_value(expr)
        if isinstance(expr, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
            return Value(CONTAINER, items=((None, self.value_of(expr.elt)),))
        if isinstance(expr, ast.DictComp):
            return Value(MAPPING, items=((None, self.value_of(expr.value)),))
        if isinstance(expr, ast.BinOp):
            return self._combined([expr.left, expr.right], expr)
        if isinstance(expr, ast.UnaryOp):
            operand = self.value_of(expr.operand)
            if (
                isinstance(expr.op, ast.USub)
                and operand.kind == CONSTANT
                and isinstance(operand.constant, int)
            ):
                return Value(CONSTANT, constant=-operand.constant)
            return operand if operand.kind in (*ARRAY_KINDS, *OTHER_ARRAYS) else UNKNOWN_VALUE
        if isinstance(expr, ast.NamedExpr):
            return self.value_of(expr.value)
        if isinstance(expr, ast.IfExp):
            sides = [self.value_of(expr.body), self.value_of(expr.orelse)]
            # `x if len(x.devices()) == 1 else gather(x)`: a test of what a side holds picks it.
            if _inspects(expr.test, _names_read(expr.body) | _names_read(expr.orelse)):
                return join(sides)
            return join_paths(sides)
        if isinstance(expr, ast.Lambda):
            return Value(FUNCTION, node=expr, owner=self._here)
        if isinstance(expr, ast.Starred):
            return self.value_of(expr.value)
        if isinstance(expr, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return self._function_value(expr)
        return UNKNOWN_VALUE

    @staticmethod
    def leaf_values(value: Value, depth: int = 0) -> list[Value]:
        """The leaves of a container, mapping or record whose items are known, one by one (a
        consumer mapped over them raises at any one that cannot be exported)."""
        if value.kind in (CONTAINER, MAPPING, INSTANCE) and depth < 8:
            return [leaf for _, item in value.items for leaf in Analysis.leaf_values(item, depth + 1)]
        return [value]

    def specialized(self, parameters: dict[ast.arg, Value]) -> Analysis:
        """This analysis with ``parameters`` (of one function) bound to the values one call
        passes: what the file's structure says is shared, no value found before is (each may
        rest on a parameter)."""
        child = copy.copy(self)
        child._parameters = parameters
        child._values = {}
        child._active = set()
        child._returns = {}
        child._self_values = {}
        child._class_attributes = {}
        return child
