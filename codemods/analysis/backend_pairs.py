"""A backend's DLPack method pair (issue 34): ``to_dlpack``/``from_dlpack`` methods of one class
(``paired_method``), whose contract is the round trip; whether the ``from_`` side is given arrays
(``pair_returns_arrays``) or, in a multi-backend library that hands one backend's capsule to
another (a dispatcher, found in the modules linked to this one by imports), other libraries'
capsules (``family_capsule``)."""

from __future__ import annotations

import ast
import re
import weakref
from collections.abc import Callable
from dataclasses import dataclass

from jax_codemod.analysis import api
from jax_codemod.analysis.capsule_facts import (
    _CAPSULE_WORDS,
    _KNOWN_ARRAYS,
    _OTHER_LIBRARY_CAPSULES,
    CUPY,
    TENSORFLOW,
    TORCH,
)
from jax_codemod.analysis.context import FileContext
from jax_codemod.analysis.guards import caught
from jax_codemod.analysis.scopes import FUNCTIONS
from jax_codemod.analysis.values import CAPSULE_PRODUCERS

# The kind of a capsule no known producer made (`backend.dlpack.to_dlpack(a)` through a module
# bound at run time, whose path under it is no producer's).
UNKNOWN_PRODUCER = "unknown"

# How many modules one module's imports are followed to (``_imports_of``): a backend family is a
# package's few modules, not a whole tree.
MAX_IMPORTED = 200


@dataclass(frozen=True)
class FamilyCapsule:
    """A sibling backend's capsule that a dispatcher hands to a backend's ``from_`` method:
    ``text`` describes it for a message; ``kind`` is its producer's kind as the analysis resolves
    the call (``TORCH`` for `torch.utils.dlpack.to_dlpack`, however the file imports or spells
    it), or ``UNKNOWN_PRODUCER`` where no known producer made it."""

    text: str
    kind: str | None


class BackendPairs:
    def __init__(self, analysis, of: Callable[[FileContext], object]) -> None:
        # The file's CapsuleAnalysis, which holds this object: a weak proxy, or the two would be a
        # cycle that only the collector frees (the engine frees a file's analysis by refcount).
        self.analysis = weakref.proxy(analysis)
        self.of = of  # another module's CapsuleAnalysis, shared (``capsules.capsules``)
        self.ctx = analysis.ctx
        self.values = analysis.values
        self._imported: dict[str, frozenset[str]] = {}  # path -> what it imports (_imports_of)

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

    def family_capsule(self, function: ast.AST) -> FamilyCapsule | None:
        """For a backend's ``from_`` method (``from_dlpack``): a sibling backend class -- of this
        module, or of another module linked to it by imports -- whose ``to_`` method returns a
        capsule of another library (a torch capsule, ``x.__dlpack__()``; torch's first where
        several siblings do), described for a message, with its producer's kind. A
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
        # A torch sibling's capsule is the one to describe where there is one: torch, which the
        # fix converts with, takes any library's capsule (PhiML's tensorflow/ backend sorts
        # before its torch/ one, and must not decide for it).
        found = None
        for ctx, analysis, klass, method in self._sibling_methods(cls, other):
            for node in ast.walk(method):
                value = node.value if isinstance(node, ast.Return) else None
                made = analysis._other_library_capsule(value) if value is not None else None
                if made is not None:
                    where = f"`{ctx.root_path or ctx.path}` line {node.lineno}"
                    text = f"`{klass.name}.{other}` ({where}) returns `{ast.unparse(value)}`, a capsule"
                    if made == TORCH:
                        return FamilyCapsule(text, made)
                    found = found or FamilyCapsule(text, made)
        return found

    def _sibling_methods(self, cls: ast.ClassDef, name: str):
        """(context, its BackendPairs, class, method) for each method ``name`` of another backend
        class of this module or of one linked to it by imports (``_package_modules``)."""
        for ctx in self._package_modules(f"def {name}"):
            pairs = self.of(ctx).pairs
            for klass in ctx.tree.body:
                if not isinstance(klass, ast.ClassDef) or klass is cls:
                    continue
                for method in klass.body:
                    if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) and method.name == name:
                        yield ctx, pairs, klass, method

    def family_takes_only_capsules(self, function: ast.AST) -> str | None:
        """For a backend's ``to_`` method (``to_dlpack``): a sibling backend class -- of this
        module, or of another module linked to it by imports -- whose ``from_`` method hands its
        parameter to a consumer that takes only capsules (TensorFlow's ``from_dlpack``),
        described for a message; None where none does, or where no dispatcher hands one
        backend's ``to_`` result to another's ``from_``. Returning the array from this ``to_``
        method would break that sibling; PhiML's maintainers returned ``tensor.__dlpack__()``."""
        cls = self.ctx.parent(function) if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
        if not isinstance(cls, ast.ClassDef) or not function.name.startswith("to_"):
            return None
        if not _CAPSULE_WORDS.search(function.name):
            return None
        other = "from_" + function.name[len("to_"):]
        if not self._hands_across(other, function.name):
            return None
        only = api.names(takes_capsules=True, takes_arrays=False)
        for ctx, pairs, klass, method in self._sibling_methods(cls, other):
            parameter = pairs.pair_parameter(method)
            for node in ast.walk(method) if parameter is not None else ():
                if (
                    isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Name)
                    and node.args[0].id == parameter.arg and pairs.analysis.qualname(node.func) in only
                ):
                    where = f"`{ctx.root_path or ctx.path}` line {node.lineno}"
                    return (f"`{klass.name}.{other}` ({where}) hands it to `{ast.unparse(node.func)}`, "
                            "which takes only capsules")
        return None

    def _other_library_capsule(self, value: ast.AST) -> str | None:
        """The producer kind of ``value`` where it is a capsule made by another library than
        JAX, else None: a producer this analysis knows (its kind, however the file spells the
        call: `from torch.utils import dlpack; dlpack.to_dlpack(t)` is torch's), or a call
        through a module bound at run time (`torchlib.utils.dlpack.to_dlpack(a)` with `global
        torchlib` set in a backend's constructor), whose kind is that of the known producer at
        the same path under the module (``_runtime_module_kind``)."""
        producer = self.analysis.producer(value)
        if producer is not None:
            return producer.kind if producer.kind in _OTHER_LIBRARY_CAPSULES else None
        if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Attribute):
            return None
        spelled = ast.unparse(value.func)
        if self.analysis.qualname(value.func) is not None or not spelled.endswith(("dlpack.to_dlpack", ".toDlpack")):
            return None
        return _runtime_module_kind(spelled)

    def _hands_across(self, taker: str, maker: str) -> bool:
        """Whether some module of the project (this one included) hands what one object's
        ``maker`` method returns to another object's ``taker`` (``target.from_dlpack(c)`` with
        ``c`` from ``which_backend(t).to_dlpack(t)``): a dispatcher between backends. Read from
        the texts (the modules that spell both calls); without one, each backend's pair only
        round-trips its own values."""
        project = self.ctx.project
        here = self.ctx.root_path
        dispatchers = [self.ctx] if _hands_across(self.ctx.text, taker, maker) else []
        # Another module counts when it is linked to this one by imports (``_linked``), as Python
        # resolves them: it imports this one, directly or through others (`from ..backends import
        # get_backend`, whose package imports each backend), or this one imports it (PhiFlow's
        # backends import the core that holds `convert` and register themselves in its list), or
        # a third imports both. A module that shares only a folder or a word with it is no dispatcher.
        if project is not None and here is not None:
            for path in sorted(project.root.modules.paths):
                if path != here:
                    text = project.text(path)
                    if f".{taker}" in text and _hands_across(text, taker, maker) and self._linked(here, path):
                        other = project.context(path)
                        if other is not None:
                            dispatchers.append(other)
        # A dispatcher that catches the TypeError where it hands a capsule over has its own way
        # around (tensorcircuit-ng's `except TypeError:` falls back to NumPy): nothing raises.
        return any(_uncaught_take(ctx, taker, maker) for ctx in dispatchers)

    def _package_modules(self, word: str) -> list[FileContext]:
        """This module's context and those of the other modules of its project whose text holds
        ``word``, read through the project, each linked to this one by imports (``_linked``),
        wherever it lies: PhiML's backends live in sibling subpackages (`backend/jax/`,
        `backend/torch/`) that its registry imports, while two scripts of one folder that each
        define a `JaxBackend` are no family."""
        found = [self.ctx]
        project = self.ctx.project
        here = self.ctx.root_path
        if project is None or here is None:
            return found
        for path in sorted(project.root.modules.paths):
            if path != here and word in project.text(path) and self._linked(here, path):
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
            if self.analysis.producer(value) is not None or self.values.value_of(value).kind not in _KNOWN_ARRAYS:
                return False
        return True


def _runtime_module_kind(spelled: str) -> str | None:
    """The producer kind of a call through a module the file binds at run time, read from the
    path under it: `torchlib.utils.dlpack.to_dlpack` is the path of torch's producer under
    another name, `a.toDlpack` CuPy's method; ``UNKNOWN_PRODUCER`` when no known producer of
    another library than JAX has that path."""
    if spelled.endswith(".toDlpack"):
        return CUPY
    under = spelled.split(".", 1)[1] if "." in spelled else ""
    libraries = {library for name, library in CAPSULE_PRODUCERS.items() if name.split(".", 1)[-1] == under}
    library = libraries.pop() if len(libraries) == 1 else None
    return {"torch": TORCH, "tensorflow": TENSORFLOW}.get(library, UNKNOWN_PRODUCER)


def _hands_across(text: str, taker: str, maker: str) -> bool:
    """``BackendPairs._hands_across`` of one text: an object's ``taker`` method, called or
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
        if _library_receiver(receiver) or caught(ctx, node, _TYPE_ERROR) or _protocol_objects_first(ctx, node):
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


def _protocol_objects_first(ctx: FileContext, node: ast.AST) -> bool:
    """Whether an earlier ``if`` of the function around ``node`` returns for every object with
    ``__dlpack__`` (`if hasattr(t, "__dlpack__") ...: return target.from_external_array(t)`),
    so the hand-over below it makes capsules only of objects without the protocol: a torch
    tensor (which has it) never becomes one there (tum-pbs/PhiML's `convert` since JAX 0.7.2)."""
    child = node
    for ancestor in ctx.ancestors(node):
        for part in ("body", "orelse", "finalbody"):
            block = getattr(ancestor, part, None)
            if isinstance(block, list) and isinstance(child, ast.stmt) and any(s is child for s in block):
                earlier = block[: next(i for i, s in enumerate(block) if s is child)]
                if any(_returns_protocol_objects(s) for s in earlier):
                    return True
        if isinstance(ancestor, (*FUNCTIONS, ast.ClassDef)):
            return False
        child = ancestor
    return False


def _returns_protocol_objects(statement: ast.stmt) -> bool:
    """``if hasattr(x, "__dlpack__") [and ...]: ... return ...`` with no ``else``."""
    if not isinstance(statement, ast.If) or statement.orelse or not isinstance(statement.body[-1], ast.Return):
        return False
    test = statement.test
    checks = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    return any(
        isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id == "hasattr" and len(c.args) == 2
        and isinstance(c.args[1], ast.Constant) and c.args[1].value == "__dlpack__"
        for c in checks
    )


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
