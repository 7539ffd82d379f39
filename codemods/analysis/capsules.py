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

The questions are split by module: ``capsule_reaching`` (which definitions reach a read),
``capsule_index`` (one walk of the file; which calls may be DLPack calls), ``capsule_origins``
(where a consumed value comes from), ``array_evidence`` (what shows a value is an array) and
``backend_pairs`` (a backend's ``to_``/``from_`` method pair); this module follows capsules
from producers to consumers, and ``CapsuleAnalysis`` is the one object rules ask.
"""

from __future__ import annotations

import ast
from functools import cached_property

from jax_codemod.analysis.array_evidence import ArrayEvidence
from jax_codemod.analysis.backend_pairs import BackendPairs, FamilyCapsule, _receiver_before
from jax_codemod.analysis.capsule_facts import (
    _ARRAY_CLASSES,
    ARRAY_CONSUMERS,
    CAPSULE_TOLERANT,
    CUPY,
    DUNDER,
    JAX,
    JAX_CONSUMERS,
    JAX_PRIVATE,
    JAX_TO_DLPACK,
    PROTOCOL,
    PROTOCOL_METHODS,
    PROTOCOL_PRODUCERS,
    TENSORFLOW,
    TF_TO_DLPACK,
    TORCH,
    TORCH_TO_DLPACK,
    Flow,
    Origin,
    Producer,
    Use,
)
from jax_codemod.analysis.capsule_index import _DLPACK_FUNCTIONS, DlpackIndex, _may_bind_a_function
from jax_codemod.analysis.capsule_origins import Origins
from jax_codemod.analysis.capsule_reaching import Reaching
from jax_codemod.analysis.context import FileContext
from jax_codemod.analysis.scopes import Definition, Scopes

# Imported from here by the rules and the tests, where they were before the split.
__all__ = [
    "ARRAY_CONSUMERS",
    "CAPSULE_TOLERANT",
    "CUPY",
    "JAX",
    "JAX_CONSUMERS",
    "JAX_PRIVATE",
    "JAX_TO_DLPACK",
    "PROTOCOL_PRODUCERS",
    "TENSORFLOW",
    "TORCH",
    "UNKNOWN_ORIGIN_OPTION",
    "_ARRAY_CLASSES",
    "_DLPACK_FUNCTIONS",
    "CapsuleAnalysis",
    "Flow",
    "Producer",
    "_may_bind_a_function",
    "_receiver_before",
    "capsules",
    "reports_unknown_origin",
]


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
        self._read_uses: dict[ast.Name, tuple] = {}  # read -> the rest of its Use in _variable_uses
        # Each question in a module of its own; the methods below are the ones rules ask.
        self.reach = Reaching(ctx, self.scopes)
        self.index = DlpackIndex(ctx, self.values)
        self.origins = Origins(self)
        self.evidence = ArrayEvidence(self)
        self.pairs = BackendPairs(self, capsules)

    # Names and definitions (capsule_reaching, capsule_index) --------------------------

    def qualname(self, node: ast.AST) -> str | None:
        """The file's resolver (``analysis.names``), names reached through
        ``importlib.import_module`` and ``getattr`` included."""
        return self.values.qualname(node)

    def loads(self, scope: ast.AST, name: str) -> list[ast.Name]:
        return self.reach.loads(scope, name)

    def reached(self, definition: ast.stmt, name: str) -> tuple[list[ast.Name], list[ast.Name], bool]:
        return self.reach.reached(definition, name)

    def sole(self, definition: ast.stmt, load: ast.Name) -> bool:
        return self.reach.sole(definition, load)

    def reaching(self, load: ast.Name) -> tuple[list[Definition], bool]:
        return self.reach.reaching(load)

    def name_loads(self, name: str) -> list[ast.Name]:
        return self.index.name_loads(name)

    def attribute_loads(self, attribute: str) -> list[ast.Attribute]:
        return self.index.attribute_loads(attribute)

    @property
    def import_froms(self) -> list[ast.ImportFrom]:
        return self.index.import_froms

    def names_bound_from(self, word: str) -> set[str]:
        return self.index.names_bound_from(word)

    # Origins, evidence, backend pairs (capsule_origins, array_evidence, backend_pairs) ---

    def origin(self, node: ast.AST) -> Origin:
        return self.origins.origin(node)

    def where_from(self, node: ast.AST) -> str:
        return self.origins.where_from(node)

    def _parameter_behind(self, name: ast.Name) -> tuple[ast.AST, ast.arg] | None:
        return self.origins.parameter_behind(name)

    def array_evidence(self, node: ast.AST, depth: int = 0, strict: bool = False) -> str | None:
        return self.evidence.array_evidence(node, depth, strict)

    def library(self, node: ast.AST) -> str | None:
        return self.evidence.library(node)

    def paired_method(self, function: ast.AST) -> ast.FunctionDef | None:
        return self.pairs.paired_method(function)

    def family_capsule(self, function: ast.AST) -> FamilyCapsule | None:
        return self.pairs.family_capsule(function)

    def family_takes_only_capsules(self, function: ast.AST) -> str | None:
        return self.pairs.family_takes_only_capsules(function)

    def pair_parameter(self, function: ast.AST) -> ast.arg | None:
        return self.pairs.pair_parameter(function)

    def pair_returns_arrays(self, function: ast.AST) -> bool:
        return self.pairs.pair_returns_arrays(function)

    # Producers and consumers --------------------------------------------------------

    @cached_property
    def producers(self) -> list[Producer]:
        found = []
        for call in self.index.candidate_calls:
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
        if PROTOCOL_PRODUCERS.get(qualified) == "argument":
            return Producer(node, PROTOCOL, single, qualified)
        if qualified is None and isinstance(node.func, ast.Attribute):
            if node.func.attr == "__dlpack__":
                source = node.func.value if not node.args and not node.keywords else None
                return Producer(node, DUNDER, source, None)
            if node.func.attr == "toDlpack" and not node.args and not node.keywords:
                return Producer(node, CUPY, node.func.value, PROTOCOL_METHODS.get("toDlpack"))
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
        return [(call, name) for call in self.index.candidate_calls if (name := self.consumer_name(call))]

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



def _single_name_assignment(statement: ast.AST | None, value: ast.AST) -> bool:
    return (
        isinstance(statement, ast.Assign)
        and statement.value is value
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
    )



def _passes_take_ownership(call: ast.Call) -> bool:
    """``take_ownership`` (gone from every to_dlpack since JAX 0.4.3x), by keyword or position."""
    return len(call.args) == 2 or any(k.arg == "take_ownership" for k in call.keywords)
