"""DLPack capsules: which calls make one, where each one goes, and who consumes it.

A DLPack capsule is a one-shot handle on an array's memory. The old API traded in them
(``jax.dlpack.to_dlpack(x)`` -> ``torch.utils.dlpack.from_dlpack(capsule)``); the array
protocol passes the array itself and lets the consumer ask for the capsule. Migrating
means following each capsule from its producer to its consumers, through variables,
containers and comprehensions, so this module answers, once per file:

- ``producers``: every call that makes a capsule, with the array it exports;
- ``flow(producer)``: where that capsule goes -- straight into a consumer, into a
  variable or container whose every use is a consumer, or somewhere we cannot follow
  (returned, stored, passed on, used twice), with the reason;
- ``origin(expression)``: for a value fed to a consumer, whether it is a capsule, a
  parameter or ``*args`` element, or of unknown origin, and what evidence says capsule;
- ``array_evidence(expression)``: what shows it is an array rather than a capsule (a known
  constructor or annotation, a tensor method's result, a guard, a use only an array
  survives), and ``where_from(expression)``: where a value of unknown kind comes from.

Which definition reaches a read is the shared ``scopes.reaching``, narrowed by ``reaching``
here: a definition that a later assignment always overwrites before the read (``x =
to_dlpack(x); x = from_dlpack(x)`` then ``return x``) does not reach it. Only calls whose
callee a DLPack function can reach by name are resolved (``_dlpack_names``).

It is a set of forward queries over the shared analysis: ``scopes.Scopes`` says which
definitions reach each read (so the reads one assignment reaches are the ones it is among
the reaching definitions of), and ``values.Analysis`` says what a value is (a torch tensor,
a NumPy array, a capsule made elsewhere) and resolves names through imports, aliases,
``importlib.import_module("jax.dlpack")`` and private spellings.
"""

from __future__ import annotations

import ast
import bisect
import re
from dataclasses import dataclass, field
from functools import cached_property

from jax_codemod.analysis import api

# How many modules one module's imports are followed to (``_imports_of``): a backend family is a
# package's few modules, not a whole tree.
MAX_IMPORTED = 200
from jax_codemod.analysis.context import FileContext
from jax_codemod.analysis.guards import caught
from jax_codemod.analysis.scopes import (
    COMPREHENSIONS,
    FUNCTIONS,
    ITER,
    TRY_STAR,
    Definition,
    Scopes,
    _contains,
    end_of,
    start_of,
)
from jax_codemod.analysis.values import (
    ARRAY,
    ARRAY_KINDS,
    CAPSULE,
    CAPSULE_PRODUCERS,
    FUNCTION,
    LIBRARY,
    MODULE,
    NUMPY,
    OTHER_ARRAYS,
    TRACER,
)
from jax_codemod.analysis.values import CUPY as CUPY_ARRAY
from jax_codemod.analysis.values import TORCH as TORCH_TENSOR

# Producers ------------------------------------------------------------------------

JAX_TO_DLPACK, TORCH_TO_DLPACK, TF_TO_DLPACK = (
    frozenset(name for name, library in CAPSULE_PRODUCERS.items() if library == owner)
    for owner in ("jax", "torch", "tensorflow")
)
JAX = "jax"  # jax.dlpack.to_dlpack(x): removed in JAX 0.7
# jax._src.dlpack.to_dlpack(x): the function behind `x.__dlpack__()`, still there (same
# signature since 0.4.3x); its capsule is only wrong where JAX itself is asked to take it.
JAX_PRIVATE = "jax-private"
TORCH = "torch"  # torch.utils.dlpack.to_dlpack(t)
DUNDER = "dunder"  # v.__dlpack__(...): any array-protocol object
CUPY = "cupy"  # cupy_array.toDlpack()
TENSORFLOW = "tensorflow"  # tf.experimental.dlpack.to_dlpack(t): TF tensors may lack __dlpack__

# Consumers ------------------------------------------------------------------------

# JAX's consumers: they take an array-protocol object and reject capsules (TypeError).
JAX_CONSUMERS = api.names(library="jax", takes_arrays=True)
# Capsules made by another library than JAX (whose own `to_dlpack` this rule fixes in its file).
_OTHER_LIBRARY_CAPSULES = frozenset({TORCH, TENSORFLOW, DUNDER, CUPY})
# Consumers that take an array-protocol object; the torch ones take a capsule as well.
ARRAY_CONSUMERS = api.names(takes_arrays=True)
CAPSULE_TOLERANT = api.names(takes_capsules=True)

# The DLPack functions by name: every producer and consumer call ends in one of them, or goes
# through a name bound from one (see CapsuleAnalysis._dlpack_names).
_DLPACK_FUNCTIONS = frozenset({"to_dlpack", "from_dlpack", "__dlpack__", "toDlpack", "fromDlpack"})

# What a PyCapsule does not have: methods that return a tensor/array, attributes of one.
_TENSOR_METHODS = frozenset({
    "contiguous", "cuda", "cpu", "detach", "to", "clone", "float", "double", "half", "bfloat16", "int",
    "long", "numpy", "copy", "astype", "reshape", "view", "flatten", "squeeze", "unsqueeze", "transpose",
    "permute", "asnumpy", "block_until_ready",
})
_TENSOR_ATTRIBUTES = frozenset({"T", "mT", "H", "data", "real", "imag"})
# Attributes that say "an array" (not just "not a capsule": a dict or a dataclass has attributes too).
_ARRAY_ONLY_ATTRIBUTES = frozenset({
    "shape", "ndim", "dtype", "device", "devices", "sharding", "is_cuda", "is_contiguous", "contiguous",
    "numel", "stride", "strides", "nbytes", "itemsize", "T", "mT", "detach", "requires_grad", "cuda", "cpu",
})
_PROTOCOL_ATTRIBUTES = frozenset({"__dlpack__", "__dlpack_device__", "__array__", "__array_interface__",
                                  "__cuda_array_interface__"})
_ARRAY_CLASSES = api.names(array_type=True)

# What the value analysis knows to be an array or tensor of some library (not a capsule).
_KNOWN_ARRAYS = ARRAY_KINDS | OTHER_ARRAYS
# Words in a name, attribute, key or annotation that say "this holds a capsule".
_CAPSULE_WORDS = re.compile(r"capsule|dlpack|dl_?tensor|dlpk|(^|_)dlp($|_)", re.IGNORECASE)
# ...and in a name, that it holds an array (`x_np`, `torch_tensor`, `arr`): a capsule's name says capsule.
_ARRAY_WORDS = re.compile(r"tensor|array|(^|_)(np|numpy|torch|pt|th|tf|cp|cupy|jnp|jax|arr|nd)($|_)", re.IGNORECASE)
# Modules whose functions return arrays or tensors, never capsules (but their to_dlpack).
_ARRAY_LIBRARIES = frozenset({"numpy", "torch", "jax", "cupy", "tensorflow"})
# Functions whose result is an object with `__dlpack__` (not a capsule), though their names
# say "dlpack": pydlpack's `asdlpack` wraps anything with an array protocol for any consumer.
_PROTOCOL_OBJECT_MAKERS = frozenset({"dlpack.asdlpack"})

@dataclass(frozen=True)
class Producer:
    call: ast.Call
    kind: str
    source: ast.expr | None  # the array the capsule exports (None: not a plain call)
    qualname: str | None


@dataclass(frozen=True)
class Use:
    """One place a capsule value reaches: a consumer's first argument, or an escape."""

    node: ast.AST  # the expression that evaluates to the capsule there
    consumer: ast.Call | None
    consumer_name: str | None
    escape: str | None = None  # why it is not a consumer: "returned", "passed to f", ...


@dataclass
class Flow:
    producer: Producer
    # "direct": the producer is a consumer's argument; "variable": bound to a name;
    # "container": an element of a list/tuple/dict/comprehension bound to a name;
    # "escape": anywhere else.
    via: str
    uses: list[Use] = field(default_factory=list)
    holder: ast.stmt | None = None  # the assignment of the variable or container
    variable: str | None = None

    @property
    def escapes(self) -> list[Use]:
        return [use for use in self.uses if use.consumer is None]

    @property
    def consumers(self) -> list[Use]:
        return [use for use in self.uses if use.consumer is not None]


@dataclass(frozen=True)
class Origin:
    """Where a value fed to a consumer comes from."""

    kind: str  # "capsule" (a flow from a producer) | "stored" | "parameter" | "unknown" | "array"
    flow: Flow | None = None
    parameter: ast.arg | None = None
    function: ast.AST | None = None
    evidence: str | None = None  # why we think it is a capsule, in words


# A value fed to a consumer that takes no capsule, whose origin the file does not show (neither a
# capsule's flow, nor a parameter or name with evidence, nor an array): reported ("cannot tell
# whether `x` is a DLPack capsule") only where this rule option is true. Off by default (issue
# 54, decision 2): the report stood on every such call, fixed or not, so a migrated file never
# checked clean, and it declined fixes that would leave one (`from_dlpack(a.toDlpack())`).
UNKNOWN_ORIGIN_OPTION = "report-unknown-origin"


def reports_unknown_origin(options: dict) -> bool:
    """Whether a rule configured with ``options`` reports values of unknown origin (and so
    declines a fix that would leave one): only when ``UNKNOWN_ORIGIN_OPTION`` is ``True``."""
    return options.get(UNKNOWN_ORIGIN_OPTION) is True


def capsules(ctx: FileContext) -> CapsuleAnalysis:
    """The file's capsule analysis, computed once and shared by every rule that asks (kept on
    the context, which the engine clears when the file is done: a table keyed weakly by the
    context kept every one alive, since the analysis refers back to its context)."""
    found = ctx.__dict__.get("_capsules")
    if found is None:
        found = ctx.__dict__["_capsules"] = CapsuleAnalysis(ctx)
    return found


class CapsuleAnalysis:
    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.values = ctx.analysis
        self.scopes: Scopes = self.values.scopes
        self._flows: dict[int, Flow] = {}
        self._loads: dict[int, dict[str, list[ast.Name]]] = {}
        # Per read: ``reaching`` (``reached`` asks it of every read once per definition).
        self._reaching: dict[ast.Name, tuple[list[Definition], bool]] = {}
        # (id(scope), name) -> (reads by id of the definition node reaching them, closure reads, scope)
        self._reached: dict[tuple[int, str], tuple] = {}
        self._read_uses: dict[ast.Name, tuple] = {}  # read -> the rest of its Use in _variable_uses
        self._imported: dict[str, frozenset[str]] = {}  # path -> what it imports (_imports_of)

    # Names ------------------------------------------------------------------------

    def qualname(self, node: ast.AST) -> str | None:
        """The file's resolver (``analysis.names``), names reached through
        ``importlib.import_module`` and ``getattr`` included."""
        return self.values.qualname(node)

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

    @property
    def _calls(self) -> list[ast.Call]:
        return self._index[0]

    def name_loads(self, name: str) -> list[ast.Name]:
        """Every read of ``name`` in the file, any scope."""
        return self._index[2].get(name, [])

    def attribute_loads(self, attribute: str) -> list[ast.Attribute]:
        return self._index[3].get(attribute, [])

    @property
    def import_froms(self) -> list[ast.ImportFrom]:
        return self._index[4]

    def names_bound_from(self, word: str) -> set[str]:
        """Names an import or assignment binds from code that mentions ``word``."""
        names: set[str] = set()
        for node in self.import_froms:
            names.update(alias.asname or alias.name for alias in node.names if alias.name == word)
        for targets, value, kind in self._index[1]:
            if kind in (ast.Assign, ast.AnnAssign, ast.NamedExpr) and word in self.ctx.source_of(value):
                names.update(n.id for target in targets for n in ast.walk(target) if isinstance(n, ast.Name))
        return names

    @cached_property
    def _index(self) -> tuple:
        """One walk of the file: its calls, its bindings (targets, bound values), its loads of
        names and attributes by spelling, and its ``from ... import`` statements."""
        calls: list[ast.Call] = []
        bindings: list[tuple] = []
        names: dict[str, list[ast.Name]] = {}
        attributes: dict[str, list[ast.Attribute]] = {}
        imports: list[ast.ImportFrom] = []
        indexed = _INDEXED
        for node in self.values.nodes:
            kind = type(node)
            if kind not in indexed:
                continue
            if kind is ast.Call:
                calls.append(node)
            elif kind is ast.Name:
                if type(node.ctx) is ast.Load:
                    names.setdefault(node.id, []).append(node)
            elif kind is ast.Attribute:
                if type(node.ctx) is ast.Load:
                    attributes.setdefault(node.attr, []).append(node)
            elif kind is ast.Assign:
                bindings.append((node.targets, node.value, kind))
            elif kind in (ast.AnnAssign, ast.AugAssign, ast.NamedExpr):
                if node.value is not None:
                    bindings.append(([node.target], node.value, kind))
            elif kind in (ast.For, ast.AsyncFor, ast.comprehension):
                bindings.append(([node.target], node.iter, kind))
            elif kind is ast.withitem:
                if node.optional_vars is not None:
                    bindings.append(([node.optional_vars], node.context_expr, kind))
            elif kind in (ast.Import, ast.ImportFrom):
                if kind is ast.ImportFrom:
                    imports.append(node)
                bindings.append(([ast.Name((a.asname or a.name).split(".")[0]) for a in node.names], node, kind))
            elif kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda):
                every = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
                if node.args.defaults or any(node.args.kw_defaults):
                    bindings.append(([ast.Name(a.arg) for a in every], node.args, kind))
        return calls, bindings, names, attributes, imports

    @cached_property
    def _dlpack_names(self) -> frozenset[str]:
        """Names and attribute names that may hold a DLPack function: the functions' own names,
        and what a binding whose value says ``dlpack`` (or names one of these) binds --
        ``from jax.dlpack import to_dlpack as export``, ``self.export = jax.dlpack.to_dlpack``,
        ``g = export`` -- to a fixpoint. Resolving every call of a large module through the
        value analysis cost most of JAX005's time on files with no DLPack call at all."""
        names = set(_DLPACK_FUNCTIONS)
        pending = []
        for targets, value, _ in self._index[1]:
            if not _may_bind_a_function(value):
                continue
            parts = [value] if hasattr(value, "lineno") else [  # function arguments: their defaults
                d for d in [*value.defaults, *value.kw_defaults] if d is not None]
            if any(self._says_dlpack(part) for part in parts):
                names |= _names_in(targets)
            else:
                pending.append((targets, parts))
        grown = True
        mentions: dict[int, set[str]] = {}  # the names each pending binding's value mentions
        while grown and len(names) > len(_DLPACK_FUNCTIONS) and pending:
            grown, rest = False, []
            for number, (targets, parts) in enumerate(pending):
                mentioned = mentions.get(id(parts))
                if mentioned is None:
                    mentioned = mentions[id(parts)] = _names_in(parts)
                if mentioned & names:
                    bound = _names_in(targets)
                    grown = grown or not bound <= names
                    names |= bound
                else:
                    rest.append((targets, parts))
            pending = rest
        return frozenset(names)

    def _says_dlpack(self, node: ast.AST) -> bool:
        """``"dlpack" in source_of(node).lower()``, asked only of a node on a line that says it."""
        lines = self._dlpack_lines
        first = bisect.bisect_left(lines, node.lineno)
        if first == len(lines) or lines[first] > (node.end_lineno or node.lineno):
            return False  # the node's text lies within its lines, and none of them says dlpack
        return "dlpack" in self.ctx.source_of(node).lower()

    @cached_property
    def _dlpack_lines(self) -> list[int]:
        """The numbers of the lines whose lower case says ``dlpack`` (lower case maps each
        character alone, and none to a line break, so a text that says it has such a line)."""
        if "dlpack" not in self.ctx.text.lower():
            return []
        return [number for number, line in enumerate(self.ctx.lines, 1) if "dlpack" in line.lower()]

    def _may_be_dlpack_call(self, call: ast.Call) -> bool:
        func = call.func
        if isinstance(func, ast.Name):
            return func.id in self._dlpack_names
        if isinstance(func, ast.Attribute):
            return func.attr in self._dlpack_names
        return True  # getattr(...)(x), table["export"](x): let the value analysis decide

    @cached_property
    def _candidate_calls(self) -> list[ast.Call]:
        return [call for call in self._calls if self._may_be_dlpack_call(call)]

    @cached_property
    def producers(self) -> list[Producer]:
        found = []
        for call in self._candidate_calls:
            producer = self.producer(call)
            if producer is not None:
                found.append(producer)
        return found

    def producer(self, node: ast.AST) -> Producer | None:
        if not isinstance(node, ast.Call):
            return None
        qualified = self.qualname(node.func)
        private = self.values.names.spelled(node.func)
        if qualified in JAX_TO_DLPACK and private in JAX_TO_DLPACK:
            qualified = private  # keep the spelling the file uses, for messages
        plain = len(node.args) >= 1 and not isinstance(node.args[0], ast.Starred)
        # The array exported, when the call passes nothing else (JAX's public to_dlpack also
        # takes keywords the rule drops or reports, so it keeps its first argument regardless).
        single = node.args[0] if plain and len(node.args) == 1 and not node.keywords else None
        if qualified == "jax._src.dlpack.to_dlpack" and not _passes_take_ownership(node):
            return Producer(node, JAX_PRIVATE, single, qualified)
        if qualified in JAX_TO_DLPACK:
            return Producer(node, JAX, node.args[0] if plain else None, qualified)
        if qualified in TORCH_TO_DLPACK:
            return Producer(node, TORCH, single, qualified)
        if qualified in TF_TO_DLPACK:
            return Producer(node, TENSORFLOW, single, qualified)
        if qualified is None and isinstance(node.func, ast.Attribute):
            if node.func.attr == "__dlpack__":
                source = node.func.value if not node.args and not node.keywords else None
                return Producer(node, DUNDER, source, None)
            if node.func.attr == "toDlpack" and not node.args and not node.keywords:
                return Producer(node, CUPY, node.func.value, None)
        return None

    def consumer_name(self, call: ast.AST) -> str | None:
        if not isinstance(call, ast.Call):
            return None
        qualified = self.qualname(call.func)
        private = self.values.names.spelled(call.func)
        if qualified in JAX_CONSUMERS and private in JAX_CONSUMERS:
            qualified = private
        if qualified in ARRAY_CONSUMERS or qualified in CAPSULE_TOLERANT:
            return qualified
        return None

    def _as_consumer_argument(self, node: ast.AST) -> tuple[ast.Call | None, str | None]:
        parent = self.ctx.parent(node)
        if isinstance(parent, ast.Call) and parent.args and parent.args[0] is node:
            name = self.consumer_name(parent)
            if name is not None:
                return parent, name
        return None, None

    @cached_property
    def consumers(self) -> list[tuple[ast.Call, str]]:
        return [(call, name) for call in self._candidate_calls if (name := self.consumer_name(call))]

    # Flows ------------------------------------------------------------------------

    def flow(self, producer: Producer) -> Flow:
        key = id(producer.call)
        if key not in self._flows:
            self._flows[key] = self._follow(producer)
        return self._flows[key]

    def _follow(self, producer: Producer) -> Flow:
        call = producer.call
        consumer, name = self._as_consumer_argument(call)
        if consumer is not None:
            return Flow(producer, "direct", [Use(call, consumer, name)])
        parent = self.ctx.parent(call)
        if _single_name_assignment(parent, call):
            uses = self._variable_uses(parent, parent.targets[0].id)
            return Flow(producer, "variable", uses, parent, parent.targets[0].id)
        container, statement = self._container_of(call)
        if container is not None:
            if statement is not None:
                uses = self._container_uses(statement, statement.targets[0].id)
                return Flow(producer, "container", uses, statement, statement.targets[0].id)
            return Flow(producer, "escape", [Use(container, None, None, self._escape_reason(container))])
        appended = self._appended_to(call)
        if appended is not None:
            statement, name = appended
            uses = self._container_uses(statement, name)
            return Flow(producer, "container", uses, statement, name)
        return Flow(producer, "escape", [Use(call, None, None, self._escape_reason(call))])

    def _appended_to(self, call: ast.Call) -> tuple[ast.Assign, str] | None:
        """``caps.append(producer)`` where ``caps = []`` is the only definition that reaches."""
        parent = self.ctx.parent(call)
        if not (isinstance(parent, ast.Call) and parent.args == [call] and not parent.keywords):
            return None
        func = parent.func
        if not (isinstance(func, ast.Attribute) and func.attr == "append" and isinstance(func.value, ast.Name)):
            return None
        reaching, complete = self.reaching(func.value)
        if not complete or len(reaching) != 1:
            return None
        statement = reaching[0].node
        empty = isinstance(statement, ast.Assign) and (
            isinstance(statement.value, ast.List) and not statement.value.elts
        )
        if empty and _single_name_assignment(statement, statement.value):
            return statement, func.value.id
        return None

    def _escape_reason(self, node: ast.AST) -> str:
        parent = self.ctx.parent(node)
        while isinstance(parent, (ast.IfExp, ast.BoolOp, ast.Tuple, ast.List)) and parent is not None:
            node, parent = parent, self.ctx.parent(parent)
        if isinstance(parent, ast.Return):
            return "returned"
        if isinstance(parent, (ast.Yield, ast.YieldFrom)):
            return "yielded"
        if isinstance(parent, ast.Call):
            callee = ast.unparse(parent.func) if parent.func is not node else "called"
            return f"passed to `{callee}`"
        if isinstance(parent, (ast.Assign, ast.AnnAssign)):
            targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
            return f"stored in `{ast.unparse(targets[0])}`"
        if isinstance(parent, ast.keyword):
            return f"passed as `{parent.arg}=`" if parent.arg else "passed as **kwargs"
        return "used where it cannot be followed"

    def _variable_uses(self, statement: ast.Assign, name: str) -> list[Use]:
        reads, closures, sure = self.reached(statement, name)
        if closures or not sure:
            return [Use(statement, None, None, f"held in `{name}`, which a nested function reads")]
        if not reads:
            return [Use(statement, None, None, f"held in `{name}`, which is never read")]
        uses = []
        for load in reads:
            # Kept per read: every definition that reaches it asks (quadratic in 2,000 branches).
            known = self._read_uses.get(load)
            if known is None:
                consumer, consumer_name = self._as_consumer_argument(load)
                known = self._read_uses[load] = (
                    (consumer, consumer_name) if consumer is not None else (None, None, self._escape_reason(load))
                )
            uses.append(Use(load, *known))
        if len(uses) > 1:
            # a capsule can be consumed once: a second reader means it is handed on
            uses.append(Use(statement, None, None, f"held in `{name}`, which is read {len(reads)} times"))
        return uses

    def _container_of(self, call: ast.Call) -> tuple[ast.AST | None, ast.Assign | None]:
        parent = self.ctx.parent(call)
        container = None
        if isinstance(parent, (ast.List, ast.Tuple, ast.Set)) and call in parent.elts or isinstance(parent, ast.Dict) and any(v is call for v in parent.values) or isinstance(parent, (ast.ListComp, ast.SetComp, ast.GeneratorExp)) and parent.elt is call or isinstance(parent, ast.DictComp) and parent.value is call:
            container = parent
        if container is None:
            return None, None
        holder = self.ctx.parent(container)
        if _single_name_assignment(holder, container):
            return container, holder
        return container, None

    def _container_uses(self, statement: ast.Assign, name: str) -> list[Use]:
        """Each element of the container ``name`` reaches: ``name[k]`` or a loop variable."""
        reads, closures, sure = self.reached(statement, name)
        if closures or not sure:
            return [Use(statement, None, None, f"held in `{name}`, which a nested function reads")]
        uses: list[Use] = []
        for load in reads:
            uses.extend(self._element_uses(load))
        if not uses:
            uses.append(Use(statement, None, None, f"held in `{name}`, which is never read"))
        return uses

    def _element_uses(self, load: ast.Name) -> list[Use]:
        parent = self.ctx.parent(load)
        if isinstance(parent, ast.Attribute) and parent.attr == "append" and self._appends_capsules(parent):
            return []  # filling the container, not reading it
        if isinstance(parent, ast.Subscript) and parent.value is load and isinstance(parent.ctx, ast.Load):
            consumer, name = self._as_consumer_argument(parent)
            if consumer is not None:
                return [Use(parent, consumer, name)]
            return [Use(parent, None, None, self._escape_reason(parent))]
        if isinstance(parent, ast.comprehension) and parent.iter is load and isinstance(parent.target, ast.Name):
            comprehension = self.ctx.parent(parent)
            target = parent.target.id
            reads = [
                n for n in ast.walk(comprehension)
                if isinstance(n, ast.Name) and n.id == target and isinstance(n.ctx, ast.Load)
            ]
            return self._loop_variable_uses(reads, target, load)
        if isinstance(parent, (ast.For, ast.AsyncFor)) and parent.iter is load and isinstance(parent.target, ast.Name):
            target = parent.target.id
            reads, closures, sure = self.reached(parent, target)
            inside = {id(n) for s in parent.body for n in ast.walk(s)}
            if closures or not sure or any(id(r) not in inside for r in reads):
                return [Use(load, None, None, f"iterated into `{target}`, which is read after the loop")]
            return self._loop_variable_uses(reads, target, load)
        return [Use(load, None, None, self._escape_reason(load))]

    def _appends_capsules(self, attribute: ast.Attribute) -> bool:
        call = self.ctx.parent(attribute)
        return (
            isinstance(call, ast.Call) and call.func is attribute and len(call.args) == 1
            and self.producer(call.args[0]) is not None
        )

    def _loop_variable_uses(self, reads: list[ast.Name], target: str, iterable: ast.AST) -> list[Use]:
        if not reads:
            return [Use(iterable, None, None, f"iterated into `{target}`, which is never read")]
        uses = []
        for read in reads:
            consumer, name = self._as_consumer_argument(read)
            uses.append(Use(read, consumer, name) if consumer else Use(read, None, None, self._escape_reason(read)))
        if len(reads) > 1:
            uses.append(Use(iterable, None, None, f"iterated into `{target}`, which is read {len(reads)} times"))
        return uses

    # Origins of consumed values -------------------------------------------------------

    def origin(self, node: ast.AST) -> Origin:
        """What the value ``node`` (a consumer's argument) is, as far as the file shows."""
        producer = self.producer(node)
        if producer is not None:
            return Origin("capsule", self.flow(producer))
        if isinstance(node, ast.Name):
            for flow in self._flows_through(node):
                return Origin("capsule", flow)
            parameter = self._parameter_behind(node)
            if parameter is not None:
                function, argument = parameter
                if self.pair_returns_arrays(function):
                    return Origin("array")
                return Origin("parameter", parameter=argument, function=function,
                              evidence=self._parameter_evidence(function, argument))
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            for flow in self._flows_through(node.value):
                if flow.via == "container":
                    return Origin("capsule", flow)
            parameter = self._parameter_behind(node.value)
            if parameter is not None:
                function, argument = parameter
                evidence = self._parameter_evidence(function, argument) or self._evidence(node)
                if evidence:
                    return Origin("parameter", parameter=argument, function=function, evidence=evidence)
        value = self.values.value_of(node)
        if value.kind == CAPSULE:
            # A capsule the value analysis follows into a container or through a comprehension,
            # where no producer's flow (and so no fix) reaches: `why` names its maker.
            return Origin("stored", evidence=value.why)
        if value.kind != "unknown":
            return Origin("array")
        evidence = self._evidence(node)
        if evidence and self.array_evidence(node) is not None:
            # A name that says "capsule" is a hint; what the file shows the value is (a tensor
            # method's result, as JAX005's own fix leaves `a_dlpack`) is evidence, and wins.
            return Origin("array")
        return Origin("unknown", evidence=evidence)

    # A backend's method pair (issue 34) -----------------------------------------------

    def paired_method(self, function: ast.AST) -> ast.FunctionDef | None:
        """The sibling of a DLPack method of a class: ``to_dlpack`` for ``from_dlpack`` and the
        reverse (any name the capsule words match). Multi-backend and tensor-network libraries
        define such a pair on each backend class, and its contract is the round trip:
        ``from_dlpack`` takes what ``to_dlpack`` returns."""
        cls = self.ctx.parent(function) if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
        if not isinstance(cls, ast.ClassDef) or not _CAPSULE_WORDS.search(function.name):
            return None
        name = function.name
        if name.startswith("from_"):
            other = "to_" + name[len("from_"):]
        elif name.startswith("to_"):
            other = "from_" + name[len("to_"):]
        else:
            return None
        return next(
            (s for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == other), None
        )

    def family_capsule(self, function: ast.AST) -> str | None:
        """For a backend's ``from_`` method (``from_dlpack``): a sibling backend class -- of this
        module, or of another module of its package -- whose ``to_`` method returns a capsule of
        another library (a torch capsule, ``x.__dlpack__()``), described for a message. A
        multi-backend library hands one backend's ``to_dlpack`` result to another's
        ``from_dlpack`` (tensorcircuit's ``general_args_to_backend``), so this method gets such
        capsules whatever its own sibling returns."""
        cls = self.ctx.parent(function) if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
        if not isinstance(cls, ast.ClassDef) or not function.name.startswith("from_"):
            return None
        if not _CAPSULE_WORDS.search(function.name):
            return None
        other = "to_" + function.name[len("from_"):]
        if not self._hands_across(function.name, other):
            return None
        for ctx in self._package_modules(f"def {other}"):
            analysis = capsules(ctx)
            for klass in ctx.tree.body:
                if not isinstance(klass, ast.ClassDef) or klass is cls:
                    continue
                for method in klass.body:
                    if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) or method.name != other:
                        continue
                    for node in ast.walk(method):
                        value = node.value if isinstance(node, ast.Return) else None
                        if value is not None and analysis._other_library_capsule(value):
                            where = f"`{ctx.root_path or ctx.path}` line {node.lineno}"
                            return f"`{klass.name}.{other}` ({where}) returns `{ast.unparse(value)}`, a capsule"
        return None

    def _other_library_capsule(self, value: ast.AST) -> bool:
        """A capsule made by another library than JAX: a producer this analysis knows, or a call
        spelled like one through a module bound at run time (`torchlib.utils.dlpack.to_dlpack(a)`
        with `global torchlib` set in a backend's constructor)."""
        producer = self.producer(value)
        if producer is not None:
            return producer.kind in _OTHER_LIBRARY_CAPSULES
        if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Attribute):
            return False
        spelled = ast.unparse(value.func)
        return self.qualname(value.func) is None and spelled.endswith(("dlpack.to_dlpack", ".toDlpack"))

    def _hands_across(self, taker: str, maker: str) -> bool:
        """Whether some module of the project (this one included) hands what one object's
        ``maker`` method returns to another object's ``taker`` (``target.from_dlpack(c)`` with
        ``c`` from ``which_backend(t).to_dlpack(t)``): a dispatcher between backends. Read from
        the texts (the modules that spell both calls); without one, each backend's pair only
        round-trips its own values."""
        project = self.ctx.project
        here = self.ctx.root_path
        dispatchers = [self.ctx] if _hands_across(self.ctx.text, taker, maker) else []
        # Another module counts when it imports this one, directly or through others (`from
        # ..backends import get_backend`, whose package imports each backend), as Python resolves
        # the imports: a module that shares only a folder or a word with it is no dispatcher.
        if project is not None and here is not None:
            for path in sorted(project.root.modules.paths):
                if path != here:
                    text = project.text(path)
                    if f".{taker}" in text and _hands_across(text, taker, maker) and here in self._imports_of(path):
                        other = project.context(path)
                        if other is not None:
                            dispatchers.append(other)
        # A dispatcher that catches the TypeError where it hands a capsule over has its own way
        # around (tensorcircuit-ng's `except TypeError:` falls back to NumPy): nothing raises.
        return any(_uncaught_take(ctx, taker, maker) for ctx in dispatchers)

    def _package_modules(self, word: str) -> list[FileContext]:
        """This module's context and those of the other modules of its folder (its package)
        whose text holds ``word``, read through the project, each linked to this one by imports
        (``_linked``): two scripts of one folder that each define a `JaxBackend` are no family."""
        found = [self.ctx]
        project = self.ctx.project
        here = self.ctx.root_path
        if project is None or here is None:
            return found
        folder = here.rpartition("/")[0]
        for path in sorted(project.root.modules.paths):
            if path != here and path.rpartition("/")[0] == folder and word in project.text(path) and self._linked(here, path):
                other = project.context(path)
                if other is not None:
                    found.append(other)
        return found

    def _imports_of(self, path: str) -> frozenset[str]:
        """The modules of the root that the module at ``path`` imports, directly or through the
        modules it imports (at most ``MAX_IMPORTED``), as Python resolves each import: the root's
        one reader of import statements (``module_text.Reach``, which the engine's gate shares)."""
        known = self._imported.get(path)
        if known is not None:
            return known
        reach = self.ctx.project.root._reacher()
        seen: set[str] = set()
        pending = [path]
        while pending and len(seen) < MAX_IMPORTED:
            for imported in reach._imported(pending.pop()):
                if imported not in seen:
                    seen.add(imported)
                    pending.append(imported)
        found = self._imported[path] = frozenset(seen)
        return found

    def _linked(self, here: str, other: str) -> bool:
        """Whether the modules at ``here`` and ``other`` are linked by imports: one imports the
        other, or a third imports both (a package's ``__init__``, a registry of backends)."""
        if other in self._imports_of(here) or here in self._imports_of(other):
            return True
        return any(
            here in imported and other in imported
            for imported in map(self._imports_of, self.ctx.project.root.modules.paths)
        )

    def pair_parameter(self, function: ast.AST) -> ast.arg | None:
        """The one value parameter of a method (after ``self``), which a pair's ``from_`` side
        takes the round trip's value in."""
        positional = [*function.args.posonlyargs, *function.args.args]
        if positional and positional[0].arg in ("self", "cls"):
            positional = positional[1:]
        return positional[0] if len(positional) == 1 else None

    def pair_returns_arrays(self, function: ast.AST) -> bool:
        """Whether ``function`` is a pair's ``from_`` side whose ``to_`` sibling returns arrays,
        not capsules: each of its returns is its own value parameter (the array handed over) or
        a value the analysis knows is an array. Then what ``function`` is given is an array."""
        sibling = self.paired_method(function)
        if sibling is None or not function.name.startswith("from_"):
            return False
        given = self.pair_parameter(sibling)
        returns = [n.value for n in ast.walk(sibling) if isinstance(n, ast.Return) and n.value is not None]
        if not returns or given is None:
            return False
        for value in returns:
            if isinstance(value, ast.Name) and value.id == given.arg:
                continue
            if self.producer(value) is not None or self.values.value_of(value).kind not in _KNOWN_ARRAYS:
                return False
        return True

    def _parameter_behind(self, name: ast.Name, depth: int = 0) -> tuple[ast.AST, ast.arg] | None:
        """The parameter whose value ``name`` holds -- directly, or as an element it iterates."""
        if depth > 4:
            return None
        scope = self.scopes.scope_of(name)
        reaching, _ = self.reaching(name)
        if not reaching:
            argument, outer, _ = self.scopes.entry(name.id, scope)
            if argument is not None:
                return self.scopes.scope_of(argument), argument
            reaching = outer
        if len(reaching) != 1:
            return None
        definition = reaching[0]
        if isinstance(definition.node, (ast.comprehension, ast.For, ast.AsyncFor)) and isinstance(
            definition.value, ast.Name
        ):
            return self._parameter_behind(definition.value, depth + 1)
        return None

    def _flows_through(self, name: ast.Name) -> list[Flow]:
        found = []
        for producer in self.producers:
            flow = self.flow(producer)
            if flow.via in ("variable", "container") and any(use.node is name for use in flow.uses) or flow.via == "container" and any(
                isinstance(use.node, ast.Subscript) and use.node.value is name for use in flow.uses
            ):
                found.append(flow)
        return found

    def _parameter_evidence(self, function: ast.AST, parameter: ast.arg) -> str | None:
        words = self._evidence_in_text(parameter.arg)
        if words:
            return f"its name `{parameter.arg}` says so"
        if parameter.annotation is not None and _CAPSULE_WORDS.search(ast.unparse(parameter.annotation)):
            return f"it is annotated `{ast.unparse(parameter.annotation)}`"
        caller = self._capsule_passed_to(function, parameter)
        if caller is not None:
            return f"a call of `{function.name}` in this file passes it a capsule"
        return None

    def _capsule_passed_to(self, function: ast.AST, parameter: ast.arg) -> ast.Call | None:
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        arguments = function.args
        positional = [a.arg for a in [*arguments.posonlyargs, *arguments.args]]
        if self.ctx.parent(function) is not self.ctx.tree and positional and positional[0] in ("self", "cls"):
            positional = positional[1:]
        for call in self._calls:
            if not self._may_call(call.func, function):
                continue
            passed = None
            if parameter.arg in positional and positional.index(parameter.arg) < len(call.args):
                passed = call.args[positional.index(parameter.arg)]
            if arguments.vararg is parameter and len(call.args) > len(positional):
                passed = call.args[len(positional)]
            passed = next((k.value for k in call.keywords if k.arg == parameter.arg), passed)
            if passed is not None and not isinstance(passed, ast.Starred):
                if self.producer(passed) is not None:
                    return call
                if isinstance(passed, ast.Name) and self._flows_through(passed):
                    return call
        return None

    def _may_call(self, func: ast.AST, function: ast.AST) -> bool:
        """Whether ``func`` may be ``function``: a name that resolves to it, or a method of that
        name on a receiver that is no module (`torch.utils.dlpack.from_dlpack` is not the file's
        own `from_dlpack`, whatever it is spelled)."""
        if isinstance(func, ast.Name):
            if func.id != function.name:
                return False
            value = self.values.value_of(func)
            return value.kind not in (FUNCTION, MODULE, LIBRARY) or value.node is function
        if isinstance(func, ast.Attribute) and func.attr == function.name:
            return self.values.qualname(func) is None
        return False

    def _evidence(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Name) and self._evidence_in_text(node.id):
            return f"its name `{node.id}` says so"
        if isinstance(node, ast.Attribute) and self._evidence_in_text(node.attr):
            return f"the attribute `{node.attr}` says so"
        if isinstance(node, ast.Subscript):
            key = node.slice
            if isinstance(key, ast.Constant) and isinstance(key.value, str) and self._evidence_in_text(key.value):
                return f"the key {key.value!r} says so"
            return self._evidence(node.value)
        if isinstance(node, ast.Call):
            callee = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if self._evidence_in_text(callee) and not callee.startswith("from_"):
                return f"it comes from `{callee}()`"
        return None

    @staticmethod
    def _evidence_in_text(text: str) -> bool:
        return bool(_CAPSULE_WORDS.search(text)) and not text.startswith(("from_dlpack", "__dlpack"))

    # Values that are not capsules -------------------------------------------------------

    def array_evidence(self, node: ast.AST, depth: int = 0, strict: bool = False) -> str | None:
        """Why ``node`` holds an object with ``__dlpack__`` rather than a capsule, or None.

        Positive evidence only: a known array/tensor constructor or annotation (the shared
        value analysis), a tensor method's result (``t.contiguous()``), or the same value used
        in this function the way only an array can be -- a PyCapsule has no attributes, no
        items and no arithmetic, so ``x.shape``, ``x[0]`` or ``x + 1`` would raise on one.

        ``strict``: evidence that it is an array, not merely something other than a capsule
        (a dict is indexable and has attributes too, and its items may be capsules)."""
        if depth > 4:
            return None
        value = self.values.value_of(node)
        if value.kind not in ("unknown", CAPSULE):
            return value.why or f"it is a {value.kind}"
        if isinstance(node, ast.Call) and self.consumer_name(node):
            return f"it is what `{self.consumer_name(node)}` returns"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _TENSOR_METHODS:
            return f"it is the result of `.{node.func.attr}()`"
        if isinstance(node, ast.Attribute) and node.attr in _TENSOR_ATTRIBUTES:
            return f"it is `.{node.attr}` of an array"
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            inner = self.array_evidence(node.value, depth + 1, strict=True)
            return f"it is an item of an array ({inner})" if inner else None
        if isinstance(node, ast.BinOp) and not strict:
            inner = self.array_evidence(node.left, depth + 1) or self.array_evidence(node.right, depth + 1)
            return f"it is computed from an array ({inner})" if inner else None
        if isinstance(node, ast.IfExp):
            body = self.array_evidence(node.body, depth + 1, strict)
            orelse = body and self.array_evidence(node.orelse, depth + 1, strict)
            return f"either branch is an array ({body}; {orelse})" if orelse else None
        if isinstance(node, ast.Call) and not strict and self.producer(node) is None:
            # An array library's own function (`tf.identity(x)`, `torch.ones(3)`) makes arrays;
            # its capsule makers are producers, handled above.
            library = self.qualname(node.func) or ""
            if library.split(".", 1)[0] in _ARRAY_LIBRARIES and "dlpack" not in library.lower():
                return f"it is what `{library}` returns"
            if library in _PROTOCOL_OBJECT_MAKERS:
                return f"`{library}` returns an object with `__dlpack__`"
        if not isinstance(node, ast.Name):
            return None
        if not strict and _ARRAY_WORDS.search(node.id) and not _CAPSULE_WORDS.search(node.id):
            return f"its name `{node.id}` says it is an array"
        parameter = self._parameter_behind(node)  # the parameter itself, or an element it iterates
        if parameter is not None and parameter[1].annotation is not None and self._array_annotation(
            parameter[1].annotation
        ):
            return f"`{parameter[1].arg}` is annotated `{ast.unparse(parameter[1].annotation)}`"
        scope = self.scopes.binding_scope(node)
        reaching, complete = self.reaching(node)
        every = self._used_as_array(node, scope, reaching, complete, strict) or self._guarded_as_array(node)
        if every:
            return every
        # Else each value the name may hold here must be shown to be an array on its own.
        found = []
        for definition in reaching:
            own = None
            if isinstance(definition.node, (ast.Assign, ast.AnnAssign)) and definition.value is not None and (
                not definition.path
            ):
                own = self.array_evidence(definition.value, depth + 1, strict)
            elif definition.path == (ITER,) and definition.value is not None:
                # `for p in packs` / `[f(p) for p in packs]`: an element of what it iterates.
                own = self._element_evidence(definition.value, depth + 1, strict)
            own = own or self._used_as_array(node, scope, [definition], True, strict)
            if not own:
                return None
            found.append(own)
        if not complete:
            # What the name held before this scope bound it: nothing (a NameError, not a
            # capsule), a parameter, or an enclosing scope's value.
            parameter, outer, _ = self.scopes.entry(node.id, scope)
            if parameter is not None or outer:
                entry = self._used_as_array(node, scope, [], False, strict)
                if not entry:
                    return None
                found.append(entry)
        return found[0] if found else None

    def _element_evidence(self, iterable: ast.AST, depth: int, strict: bool) -> str | None:
        """``array_evidence`` of every element of ``iterable``: a display, or a comprehension
        (directly, or bound once to the name iterated), each of whose elements has it."""
        if depth > 4:
            return None
        if isinstance(iterable, ast.Name):
            reaching, complete = self.reaching(iterable)
            if not complete or len(reaching) != 1:
                return None
            definition = reaching[0]
            if not isinstance(definition.node, ast.Assign) or definition.path or definition.value is None:
                return None
            if self._maybe_mutated(iterable):
                return None  # `packs.append(capsule)`: the elements are not only the display's
            iterable = definition.value
        if isinstance(iterable, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
            inner = self.array_evidence(iterable.elt, depth + 1, strict)
            return f"each element is an array ({inner})" if inner else None
        if isinstance(iterable, (ast.List, ast.Tuple, ast.Set)) and iterable.elts:
            found = [self.array_evidence(e, depth + 1, strict) for e in iterable.elts]
            return f"each element is an array ({found[0]})" if all(found) else None
        return None

    def _maybe_mutated(self, name: ast.Name) -> bool:
        """Whether anything in the scope binding ``name`` (nested scopes included) may change
        the container it names in place: a method or attribute of it (`append`, `extend`), an
        item assigned or deleted, an augmented assignment."""
        scope = self.scopes.binding_scope(name)
        for node in ast.walk(scope):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == name.id:
                return True
            if (
                isinstance(node, ast.Subscript)
                and not isinstance(node.ctx, ast.Load)
                and isinstance(node.value, ast.Name)
                and node.value.id == name.id
            ):
                return True
            if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id == name.id:
                return True
        return False

    def _used_as_array(self, name: ast.Name, scope: ast.AST, reaching: list[Definition],
                       complete: bool, strict: bool = False) -> str | None:
        """A read that sees exactly these definitions (the same value) and that only an array survives."""
        same = {id(d.node) for d in reaching}
        for load in self.loads(scope, name.id):
            if load is name:
                continue
            other, other_complete = self.reaching(load)
            if {id(d.node) for d in other} != same or other_complete != complete:
                continue
            parent = self.ctx.parent(load)
            if isinstance(parent, ast.Attribute) and parent.value is load and (
                parent.attr in _ARRAY_ONLY_ATTRIBUTES or parent.attr in _PROTOCOL_ATTRIBUTES
                or not strict and not parent.attr.startswith("__")
            ):
                return f"line {load.lineno} reads `{name.id}.{parent.attr}`, which a capsule does not have"
            if strict:
                continue
            if isinstance(parent, ast.Subscript) and parent.value is load:
                return f"line {load.lineno} indexes `{name.id}`, which a capsule does not support"
            if isinstance(parent, ast.BinOp) or isinstance(parent, ast.UnaryOp) and not isinstance(
                parent.op, ast.Not
            ):
                return f"line {load.lineno} computes with `{name.id}`, which a capsule does not support"
        return None

    def _guarded_as_array(self, name: ast.Name) -> str | None:
        """``if hasattr(x, "__dlpack__"):`` / ``torch.is_tensor(x)`` / ``isinstance(x, np.ndarray)``
        around the read, or ``if not ...: raise`` (or return) before it, in the same function."""
        same = {id(d.node) for d in self.reaching(name)[0]}
        child: ast.AST = name
        for ancestor in self.ctx.ancestors(name):
            if isinstance(ancestor, (ast.If, ast.IfExp, ast.While)):
                inside = ancestor.body if isinstance(ancestor, ast.IfExp) else None
                in_body = child is inside or (isinstance(ancestor.body, list) and child in ancestor.body)
                if in_body:
                    why = self._array_test(ancestor.test, name, same, negated=False)
                    if why:
                        return why
            block = None
            for part in ("body", "orelse", "finalbody"):
                statements = getattr(ancestor, part, None)
                if isinstance(statements, list) and any(s is child for s in statements):
                    block = statements
            if isinstance(block, list) and isinstance(child, ast.stmt):
                for earlier in block[:next(i for i, s in enumerate(block) if s is child)]:
                    if isinstance(earlier, ast.If) and not earlier.orelse and earlier.body and isinstance(
                        earlier.body[-1], (ast.Raise, ast.Return)
                    ):
                        why = self._array_test(earlier.test, name, same, negated=True)
                        if why:
                            return why
            if isinstance(ancestor, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                return None
            child = ancestor
        return None

    def _array_test(self, test: ast.AST, name: ast.Name, same: set[int], negated: bool) -> str | None:
        if negated:
            if not (isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)):
                return None
            test = test.operand
        tests = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) and not negated \
            else [test]
        for check in tests:
            if not (isinstance(check, ast.Call) and check.args and isinstance(check.args[0], ast.Name)
                    and check.args[0].id == name.id):
                continue
            if {id(d.node) for d in self.reaching(check.args[0])[0]} != same:
                continue
            func = self.qualname(check.func) or getattr(check.func, "id", None)
            second = check.args[1] if len(check.args) == 2 else None
            if func == "hasattr" and isinstance(second, ast.Constant) and second.value in _PROTOCOL_ATTRIBUTES:
                return f"it is checked with `{ast.unparse(check)}`"
            if func == "torch.is_tensor" and len(check.args) == 1:
                return f"it is checked with `{ast.unparse(check)}`"
            if func == "isinstance" and second is not None and all(
                self._array_annotation(t) for t in (second.elts if isinstance(second, ast.Tuple) else [second])
            ):
                return f"it is checked with `{ast.unparse(check)}`"
        return None

    def _array_annotation(self, annotation: ast.AST) -> bool:
        value = self.values.annotation_value(annotation)
        if value.kind in (ARRAY, TRACER, TORCH_TENSOR, NUMPY, CUPY_ARRAY):
            return True
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            try:
                annotation = ast.parse(annotation.value, mode="eval").body
            except SyntaxError:
                return False
        if isinstance(annotation, ast.Subscript):  # jaxtyping's Float[torch.Tensor, "b"], Optional[...]
            inner = annotation.slice
            first = inner.elts[0] if isinstance(inner, ast.Tuple) and inner.elts else inner
            return self._array_annotation(first)
        if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
            members = [m for m in (annotation.left, annotation.right)
                       if not (isinstance(m, ast.Constant) and m.value is None)]
            return bool(members) and all(self._array_annotation(m) for m in members)
        return self.qualname(annotation) in _ARRAY_CLASSES

    def where_from(self, node: ast.AST, depth: int = 0) -> str:
        """Where a consumed value of unknown kind comes from, in words."""
        if isinstance(node, ast.Name) and depth < 4:
            reaching, complete = self.reaching(node)
            if complete and len(reaching) == 1 and isinstance(reaching[0].node, (ast.Assign, ast.AnnAssign)) and (
                reaching[0].value is not None and not reaching[0].path
            ):
                return self.where_from(reaching[0].value, depth + 1)
        if isinstance(node, (ast.Name, ast.Subscript)):
            name = node if isinstance(node, ast.Name) else node.value
            if isinstance(name, ast.Name):
                parameter = self._parameter_behind(name)
                if parameter is not None:
                    function, argument = parameter
                    owner = getattr(function, "name", "a lambda")
                    owner = f"`{owner}`" if owner != "a lambda" else owner
                    star = "*" if argument is getattr(function.args, "vararg", None) else (
                        "**" if argument is getattr(function.args, "kwarg", None) else "")
                    if name is not node:
                        return f"an item of the parameter `{star}{argument.arg}` of {owner}"
                    element = "an element of " if star or name.id != argument.arg else ""
                    return f"{element}the parameter `{star}{argument.arg}` of {owner}"
        if isinstance(node, ast.Attribute):
            return f"the attribute `{node.attr}`"
        if isinstance(node, ast.Call):
            return f"what `{ast.unparse(node.func)}()` returns"
        if isinstance(node, ast.Subscript):
            return f"an item of `{ast.unparse(node.value)}`"
        return "a value this file does not show the making of"

    # Libraries of values --------------------------------------------------------------

    def library(self, node: ast.AST) -> str | None:
        """"torch", "numpy", "jax" or "cupy" when the file shows which library ``node`` is from."""
        kind = self.values.value_of(node).kind
        library = {TORCH_TENSOR: "torch", NUMPY: "numpy", ARRAY: "jax", TRACER: "jax", CUPY_ARRAY: "cupy"}.get(kind)
        method = node.func.attr if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) else None
        if library is None and method in ("detach", "contiguous", "requires_grad_"):
            return "torch"  # torch's own methods, whatever the receiver
        return library


def _hands_across(text: str, taker: str, maker: str) -> bool:
    """``CapsuleAnalysis._hands_across`` of one text: an object's ``taker`` method, called or
    passed on (`tree_map(target.from_dlpack, caps)`), given what another object's ``maker``
    returns (in its argument, or anywhere else in the text when not in its argument)."""
    makers = _receivers(text, maker)
    for match in re.finditer(rf"\.\s*{taker}\b(\s*\()?", text):
        receiver = _receiver_before(text, match.start())
        if receiver is None or _library_receiver(receiver):
            continue
        inner = set()
        if match.group(1):
            line_end = text.find("\n", match.end())
            inner = _receivers(text[match.end() : line_end if line_end >= 0 else len(text)], maker)
        if inner - {receiver} or (not inner and makers - {receiver}):
            return True
    return False


def _uncaught_take(ctx: FileContext, taker: str, maker: str) -> bool:
    """Whether ``ctx`` hands what some object's ``maker`` returns to another object's ``taker``
    (not a library's module) outside every try body that catches TypeError: called on it
    (`jax_b.from_dlpack(torch_b.to_dlpack(t))`), or passed with it to a call
    (`tree_map(target.from_dlpack, caps)`, `caps` from `tree_map(tensor_to_dlpack, args)`)."""
    feeds = _Feeds(ctx, maker)
    for node in ctx.analysis.nodes:
        if not isinstance(node, ast.Attribute) or node.attr != taker:
            continue
        receiver = _spelled(node.value)
        if _library_receiver(receiver) or caught(ctx, node, _TYPE_ERROR):
            continue
        parent = ctx.parent(node)
        if not isinstance(parent, ast.Call):
            continue
        given = [*parent.args, *(k.value for k in parent.keywords)]
        if parent.func is not node:
            given = [g for g in given if g is not node]
        scope = next((a for a in ctx.ancestors(node) if isinstance(a, FUNCTIONS)), ctx.tree)
        if any(feeds.fed(g, receiver, scope, 3) for g in given):
            return True
    return False


class _Feeds:
    """Whether an expression holds what ``maker`` returns on an object other than the taker's:
    directly, through a name bound in its function (`c = ...`, `for c in caps`), or through a
    module-level function of the file that returns it (called, or passed on as in
    ``tree_map(tensor_to_dlpack, args)``); a few steps deep. Each function's bindings are
    gathered once and each answer kept, so a large file costs one walk per function."""

    def __init__(self, ctx: FileContext, maker: str) -> None:
        self.maker = maker
        self.functions = {
            s.name: s for s in ctx.tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
        }
        self._bindings: dict[int, dict[str, list[ast.AST]]] = {}
        self._answers: dict[tuple[int, str | None, int], bool] = {}
        self._returns: dict[int, list[ast.AST]] = {}

    def bindings(self, scope: ast.AST) -> dict[str, list[ast.AST]]:
        found = self._bindings.get(id(scope))
        if found is None:
            found = self._bindings[id(scope)] = {}
            for binding in ast.walk(scope):
                if isinstance(binding, ast.Assign):
                    targets, value = binding.targets, binding.value
                elif isinstance(binding, (ast.For, ast.AsyncFor, ast.comprehension)):
                    targets, value = [binding.target], binding.iter
                else:
                    continue
                for target in targets:
                    if isinstance(target, ast.Name):
                        found.setdefault(target.id, []).append(value)
        return found

    def returns(self, function: ast.AST) -> list[ast.AST]:
        found = self._returns.get(id(function))
        if found is None:
            found = self._returns[id(function)] = [
                r.value for r in ast.walk(function) if isinstance(r, ast.Return) and r.value is not None
            ]
        return found

    def fed(self, expression: ast.AST, taker: str | None, scope: ast.AST, depth: int) -> bool:
        key = (id(expression), taker, depth)
        if key not in self._answers:
            self._answers[key] = False  # a name bound to itself (`c = f(c)`) ends here
            self._answers[key] = self._fed(expression, taker, scope, depth)
        return self._answers[key]

    def _fed(self, expression: ast.AST, taker: str | None, scope: ast.AST, depth: int) -> bool:
        for node in ast.walk(expression):
            if isinstance(node, ast.Attribute) and node.attr == self.maker:
                receiver = _spelled(node.value)
                if not _library_receiver(receiver) and receiver != taker:
                    return True
            elif isinstance(node, ast.Name) and depth:
                function = self.functions.get(node.id)
                if function is not None and any(self.fed(r, None, function, depth - 1) for r in self.returns(function)):
                    return True
                if any(self.fed(v, taker, scope, depth - 1) for v in self.bindings(scope).get(node.id, ())):
                    return True
        return False


def _spelled(node: ast.AST) -> str:
    return re.sub(r"\s+", "", ast.unparse(node))


_TYPE_ERROR = frozenset({"TypeError"})


def _receivers(text: str, method: str) -> set[str]:
    """The objects ``method`` is looked up on in ``text``, but libraries' modules and self."""
    found = (_receiver_before(text, m.start()) for m in re.finditer(rf"\.\s*{method}\b", text))
    return {r for r in found if r is not None and not _library_receiver(r)}


def _receiver_before(text: str, dot: int) -> str | None:
    """The object whose attribute is looked up at ``text[dot] == "."``, spelled without spaces:
    dotted names, each maybe called or indexed with flat arguments on one line
    (`TorchBackend().to_dlpack`, `backends[name].from_dlpack`, `get_backend(t).to_dlpack`).
    Read backwards, at most ``_LONGEST_RECEIVER`` characters: a regex tried at every start, or
    a chain read whole at each of its links, is quadratic on a long line, and the text is
    anyone's. A longer receiver is None, as is anything else."""
    parts: list[str] = []
    at = dot
    while True:
        if dot - at > _LONGEST_RECEIVER:
            return None
        at = _skip_blanks_back(text, at)
        closed = at
        while at > 0 and text[at - 1] in ")]":
            opener = "(" if text[at - 1] == ")" else "["
            found = at - 2
            while found >= 0 and text[found] not in "()[]\n" and dot - found <= _LONGEST_RECEIVER:
                found -= 1
            if found < 0 or text[found] != opener:
                return None
            at = found
        word = at
        while word > 0 and (text[word - 1].isalnum() or text[word - 1] == "_") and dot - word <= _LONGEST_RECEIVER:
            word -= 1
        if word == at or word > 0 and (text[word - 1].isalnum() or text[word - 1] == "_"):
            return None
        parts.append(text[word:at] + re.sub(r"\s+", "", text[at:closed]))
        at = _skip_blanks_back(text, word)
        if at == 0 or text[at - 1] != ".":
            return ".".join(reversed(parts))
        at -= 1


def _skip_blanks_back(text: str, at: int) -> int:
    stop = max(0, at - _LONGEST_RECEIVER)
    while at > stop and text[at - 1] in " \t":
        at -= 1
    return at


_LONGEST_RECEIVER = 200


# Receivers of a `from_dlpack`/`to_dlpack` that are a library's module, or the object itself.
_LIBRARY_RECEIVERS = frozenset({"np", "numpy", "jnp", "jax", "torch", "cupy", "cp", "tf", "self", "cls"})


def _library_receiver(receiver: str) -> bool:
    return receiver in _LIBRARY_RECEIVERS or receiver.rpartition(".")[2] in ("dlpack", "numpy")


def _single_name_assignment(statement: ast.AST | None, value: ast.AST) -> bool:
    return (
        isinstance(statement, ast.Assign)
        and statement.value is value
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
    )


# The node types ``_index`` keeps something of (every other node is passed over at once).
_INDEXED = frozenset({
    ast.Call, ast.Name, ast.Attribute, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr, ast.For,
    ast.AsyncFor, ast.comprehension, ast.withitem, ast.Import, ast.ImportFrom, ast.FunctionDef,
    ast.AsyncFunctionDef, ast.Lambda,
})


def _names_in(nodes: list[ast.AST]) -> set[str]:
    """The names and attribute names anywhere in ``nodes``."""
    return {n.id if isinstance(n, ast.Name) else n.attr
            for node in nodes for n in ast.walk(node) if isinstance(n, (ast.Name, ast.Attribute))}


def _may_bind_a_function(value: ast.AST) -> bool:
    """What ``x = value`` binds may be a function: anything but the result of calling a DLPack
    function (an array or a capsule), so ``y = jax.dlpack.from_dlpack(t)`` taints nothing."""
    if isinstance(value, ast.Call):
        func = value.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        return name not in _DLPACK_FUNCTIONS
    return True


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


def _passes_take_ownership(call: ast.Call) -> bool:
    """``take_ownership`` (gone from every to_dlpack since JAX 0.4.3x), by keyword or position."""
    return len(call.args) == 2 or any(k.arg == "take_ownership" for k in call.keywords)
