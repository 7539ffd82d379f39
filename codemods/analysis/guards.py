"""Where code already handles an error: the ``try`` bodies whose handlers catch it, and the
branches whose test shows a value is no tracer.

Shared by every rule that declines to touch an export some ``except`` already answers, or an
access that runs only on a concrete array.
"""

from __future__ import annotations

import ast

from jax_codemod.analysis import api
from jax_codemod.analysis.names import canonical
from jax_codemod.analysis.scopes import FUNCTIONS, TRY_STAR, walk

BROAD_EXCEPTIONS = frozenset({"Exception", "BaseException"})


def in_try_body(statement: ast.AST, child: ast.AST) -> bool:
    """Whether ``child`` is in the body of ``statement`` as a try, where its handlers apply."""
    return isinstance(statement, (ast.Try, TRY_STAR)) and child in statement.body


def handler_catches(ctx, handler: ast.ExceptHandler, exceptions: frozenset[str]) -> bool:
    """Whether ``handler`` catches one of ``exceptions`` (last name components), or everything."""
    if handler.type is None:
        return True
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    for caught in types:
        spelled = ctx.qualname(caught)
        if spelled is None and isinstance(caught, ast.Name) and not ctx.is_bound(caught.id):
            spelled = caught.id
        if spelled and spelled.rsplit(".", 1)[-1] in exceptions | BROAD_EXCEPTIONS:
            return True
    return False


def caught(ctx, node: ast.AST, exceptions: frozenset[str], stop: ast.AST | None = None) -> bool:
    """Whether ``node`` runs in a try body, within its function (or ``stop``), that catches one
    of ``exceptions``."""
    child = node
    for ancestor in ctx.ancestors(node):
        if ancestor is stop or (stop is None and isinstance(ancestor, (*FUNCTIONS, ast.ClassDef))):
            return False
        if in_try_body(ancestor, child) and any(
            handler_catches(ctx, handler, exceptions) for handler in ancestor.handlers
        ):
            return True
        child = ancestor
    return False


# Where a name is known not to hold a tracer ------------------------------------------------

TRACER_CLASSES = api.public_names(tracer_class=True)
HOST_CLASSES = api.public_names(tracer_class=False) | {"int", "float", "complex", "bool", "str", "bytes"}
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


def not_a_tracer(ctx, node: ast.AST, value: ast.AST) -> bool:
    """Whether ``value``, a name, holds no tracer where ``node`` runs, by the test of a branch:
    `if not isinstance(x, core.Tracer): x.item()`, `if isinstance(x, np.ndarray): x.tolist()`
    (classes no tracer is an instance of), the `else` of `if isinstance(x, core.Tracer)`,
    the code after `if isinstance(x, core.Tracer): return x` in the same block, the later
    operands of `not isinstance(x, core.Tracer) and x.item()`; with the name not bound again
    between the test and ``node`` (in a loop between them: anywhere in it). Code that asks so
    runs the concrete-only access only on a concrete array (equinox's `error_if`)."""
    if value.__class__ is not ast.Name or "isinstance" not in ctx.text:
        return False
    name, child = value.id, node
    for parent in ctx.ancestors(node):
        # The statements before ``child`` in its block, nearest first: an exit taken for a
        # tracer shows it concrete; a binding in between (or before the test) undoes a test.
        for block in _blocks(parent):
            if _holds(block, child):
                for statement in reversed(block[: _index(block, child)]):
                    if _exits_unless_concrete(ctx, statement, name):
                        return True
                    if _stores(statement, name):
                        return False
        if isinstance(parent, (*FUNCTIONS, ast.ClassDef, ast.Module)):
            return False
        if parent.__class__ in (ast.If, ast.IfExp):
            if _in_branch(parent.body, child) and _shows_concrete(ctx, parent.test, name, True):
                return True
            if _in_branch(parent.orelse, child) and _shows_concrete(ctx, parent.test, name, False):
                return True
        elif parent.__class__ is ast.BoolOp and child is not parent.values[0]:
            # `a and b` runs `b` where `a` is true; `a or b`, where it is false.
            when = parent.op.__class__ is ast.And
            if any(_shows_concrete(ctx, operand, name, when) for operand in parent.values[: _index(parent.values, child)]):
                return True
        if isinstance(parent, _LOOPS) and _stores(parent, name):
            return False  # bound again on a later pass, after the test that held
        child = parent
    return False


def _index(items: list, child) -> int:
    return next(i for i, item in enumerate(items) if item is child)


def _in_branch(branch, child) -> bool:
    return branch is child or _holds(branch, child)


def _holds(block, child) -> bool:
    return isinstance(block, list) and any(statement is child for statement in block)


def _blocks(node: ast.AST) -> list[list]:
    return [value for field in ("body", "orelse", "finalbody") if isinstance(value := getattr(node, field, None), list)] + [
        handler.body for handler in getattr(node, "handlers", ())
    ]


def _is_tracer_test(ctx, test: ast.AST, name: str) -> bool:
    """`isinstance(name, core.Tracer)`, or with a tuple of classes that holds the tracer's."""
    classes = _isinstance_classes(ctx, test, name)
    return classes is not None and any(_class_name(ctx, option) in TRACER_CLASSES for option in classes)


def _is_host_test(ctx, test: ast.AST, name: str) -> bool:
    """`isinstance(name, np.ndarray)`, `isinstance(name, (int, np.generic))`: classes no tracer
    is an instance of, every one."""
    classes = _isinstance_classes(ctx, test, name)
    return bool(classes) and all(_class_name(ctx, option) in HOST_CLASSES for option in classes)


def _class_name(ctx, node: ast.AST) -> str | None:
    if node.__class__ is ast.Name and not ctx.is_bound(node.id) and node.id in HOST_CLASSES:
        return node.id  # a builtin
    return canonical(ctx.qualname(node))


def isinstance_classes(test: ast.AST, name: str) -> list[ast.AST] | None:
    """The class expressions of `isinstance(name, C)` or `isinstance(name, (C, D))`; else None."""
    if not (
        test.__class__ is ast.Call
        and test.func.__class__ is ast.Name
        and test.func.id == "isinstance"
        and len(test.args) == 2
        and not test.keywords
        and test.args[0].__class__ is ast.Name
        and test.args[0].id == name
    ):
        return None
    classes = test.args[1]
    return classes.elts if classes.__class__ is ast.Tuple else [classes]


def _isinstance_classes(ctx, test: ast.AST, name: str) -> list[ast.AST] | None:
    """``isinstance_classes``, where the file does not bind `isinstance` to something else."""
    return None if ctx.is_bound("isinstance") else isinstance_classes(test, name)


def _shows_concrete(ctx, test: ast.AST, name: str, when: bool) -> bool:
    """Whether ``test`` evaluating to ``when`` shows ``name`` holds no tracer: true, a test of
    host classes (or a conjunction with one); false, a test of the tracer's class (or a
    disjunction with one); `not` turns one into the other."""
    if test.__class__ is ast.UnaryOp and test.op.__class__ is ast.Not:
        return _shows_concrete(ctx, test.operand, name, not when)
    if test.__class__ is ast.BoolOp and test.op.__class__ is (ast.And if when else ast.Or):
        return any(_shows_concrete(ctx, value, name, when) for value in test.values)
    return _is_host_test(ctx, test, name) if when else _is_tracer_test(ctx, test, name)


def _exits_unless_concrete(ctx, statement: ast.AST, name: str) -> bool:
    """`if isinstance(name, core.Tracer): return ...` (or raise, continue, break) with no
    `else`: the statements after it run only with a concrete ``name``."""
    return (
        statement.__class__ is ast.If
        and not statement.orelse
        and statement.body[-1].__class__ in _EXITS
        and _shows_concrete(ctx, statement.test, name, False)
    )


def _stores(node: ast.AST, name: str) -> bool:
    """Whether ``name`` is bound (or deleted) anywhere in ``node``."""
    return any(
        (inner.__class__ is ast.Name and inner.id == name and inner.ctx.__class__ is not ast.Load)
        or (inner.__class__ in (ast.Global, ast.Nonlocal) and name in inner.names)
        for inner in ast.walk(node)
    )


# A helper whose every caller handles its error (issue 54) ---------------------------------

# How many callers up a catch is looked for: the helper's callers, and theirs.
CALLER_DEPTH = 2
# How many re-exports (`from .interop import to_torch` in a package's `__init__`) are followed.
_REEXPORTS = 8


def callers_catch(ctx, node: ast.AST, exceptions: frozenset[str], depth: int = 0) -> bool:
    """Whether ``node`` runs in a plain function (``def``, not a method, undecorated, no generator
    or coroutine) that is only ever called, and every call of it, project-wide through imports,
    runs in a try body (in the caller's function) that catches one of ``exceptions`` -- or in a
    function of which that holds in turn (``CALLER_DEPTH``). Then what ``node`` raises reaches a
    handler at every call: `def to_torch(x): return torch.from_dlpack(x)` whose callers all wrap
    `to_torch(x)` in `try: ... except BufferError: <fallback>` is a correct program. A use of the
    function that is no call (passed on, stored, `getattr(module, "to_torch")`), a caller the
    project does not show, or none at all: it does not hold."""
    function = next((a for a in ctx.ancestors(node) if isinstance(a, (*FUNCTIONS, ast.ClassDef))), None)
    if not _plain_function(ctx, function):
        return False
    key = (id(function), exceptions, depth)
    known = ctx.__dict__.setdefault("_callers_catch", {})
    if key not in known:
        known[key] = False  # a function that calls itself through another ends here

        def handled(calls: list[tuple] | None) -> bool:
            return calls is not None and all(
                caught(where, call, exceptions)
                or (depth + 1 < CALLER_DEPTH and callers_catch(where, call, exceptions, depth + 1))
                for where, call in calls
            )

        # The module's own calls first: the other modules are read only when each of those is
        # handled (most helpers a finding is in have a call that is not).
        own = _own_calls(ctx, function)
        known[key] = handled(own) and handled(elsewhere := _other_calls(ctx, function)) and bool(own or elsewhere)
    return known[key]


def _plain_function(ctx, function: ast.AST | None) -> bool:
    if function.__class__ is not ast.FunctionDef or function.decorator_list:
        return False
    if isinstance(ctx.parent(function), ast.ClassDef):
        return False
    # A generator's body runs when it is iterated, not where it is called.
    return not any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in _own_nodes(function))


def _own_nodes(function: ast.AST):
    """The nodes of ``function``'s body, not those of the functions and classes it defines."""
    pending = list(function.body)
    while pending:
        node = pending.pop()
        yield node
        if not isinstance(node, (*FUNCTIONS, ast.ClassDef)):
            pending.extend(ast.iter_child_nodes(node))


def _own_calls(ctx, function: ast.FunctionDef) -> list[tuple] | None:
    """The calls of ``function`` in its module as (its context, the call), or None where a use
    of it is no call, or another binding of its name leaves the callee unknown."""
    name = function.name
    scope = ctx.parent(function)
    found = []
    for node in walk(scope):
        if node is function:
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return None
        if node.__class__ is ast.Name and node.id == name:
            if node.ctx.__class__ is not ast.Load:
                return None
            if not _within(node, function):
                parent = ctx.parent(node)
                if not (parent.__class__ is ast.Call and parent.func is node):
                    return None
                found.append((ctx, parent))
        elif isinstance(node, (ast.Import, ast.ImportFrom)) and any(
            (alias.asname or alias.name).split(".")[0] == name for alias in node.names
        ):
            return None
    return found


def _other_calls(ctx, function: ast.FunctionDef) -> list[tuple] | None:
    """The calls of ``function`` in the other modules of the project as (their context, the
    call), or None where one of them uses it otherwise or may reach it unseen."""
    view = getattr(ctx, "project", None)
    here = getattr(ctx, "root_path", None)
    if ctx.parent(function).__class__ is not ast.Module or view is None or here is None:
        return []  # a local function, or a file checked alone: no other module calls it
    name = function.name
    found = []
    # Each module read (and so recorded among what the answer depends on: a module that starts
    # calling the helper changes it); its imports only where it says the name.
    mention = [path for path, text in _module_texts(ctx, view) if path != here and name in text]
    importers = _importers(ctx, view, here) if mention else frozenset()
    for path in mention:
        if path not in importers:
            continue
        other = view.context(path)
        if other is None:
            return None
        calls = _imported_calls(view, other, path, here, name)
        if calls is None:
            return None
        found.extend((other, call) for call in calls)
    return found


def _module_texts(ctx, view) -> list[tuple[str, str]]:
    """(path, text) of each module of the root, read once per checked file (``View.text``)."""
    found = ctx.__dict__.get("_module_texts")
    if found is None:
        found = ctx.__dict__["_module_texts"] = [(path, view.text(path)) for path in sorted(view.root.modules.paths)]
    return found


def _importers(ctx, view, here: str) -> frozenset[str]:
    """The modules of the root that import the one at ``here``, directly or through others (a
    package that re-exports its names), as Python resolves their imports (``module_text.Reach``,
    function-level imports included): no other module can call a function of ``here``. Found
    once per checked file, from every module's imports (the engine's gate reads them too)."""
    known = ctx.__dict__.setdefault("_importers", {})
    if here not in known:
        reach = view.root._reacher()
        importers: dict[str, list[str]] = {}
        for path in view.root.modules.paths:
            for imported in reach._imported(path):
                importers.setdefault(imported, []).append(path)
        found: set[str] = set()
        pending = [here]
        while pending:
            for path in importers.get(pending.pop(), ()):
                if path not in found:
                    found.add(path)
                    pending.append(path)
        known[here] = frozenset(found)
    return known[here]


def _imported_calls(view, other, path: str, here: str, name: str) -> list[ast.Call] | None:
    """The calls of the function ``name`` of the module at ``here`` in the module ``other`` (at
    ``path``), or None where it uses the function otherwise or may reach it unseen."""
    calls = []
    # The names its imports bind the function to (`from pkg.interop import to_torch as convert`).
    names = {name} | {
        alias.asname
        for node in other.analysis.nodes
        if node.__class__ is ast.ImportFrom
        for alias in node.names
        if alias.name == name and alias.asname
    }
    for node in other.analysis.nodes:
        if node.__class__ is ast.Call and node.func.__class__ is ast.Name and node.func.id == "getattr" and any(
            isinstance(a, ast.Constant) and a.value == name for a in node.args
        ):
            return None
        if not (
            (node.__class__ is ast.Name and node.id in names)
            or (node.__class__ is ast.Attribute and node.attr == name)
        ) or node.ctx.__class__ is not ast.Load:
            continue
        qualified = other.qualname(node)
        if qualified is None:
            if node.__class__ is ast.Name and not other.is_bound(node.id):
                return None  # a name from nowhere the resolver follows (a star import)
            continue
        if not _is_function_of(view, qualified, path, here, name):
            continue
        parent = other.parent(node)
        if not (parent.__class__ is ast.Call and parent.func is node):
            return None
        calls.append(parent)
    return calls


def _is_function_of(view, qualified: str, importer: str, here: str, name: str) -> bool:
    """Whether ``qualified``, read in the module at ``importer``, is ``name`` of the module at
    ``here``, through the re-exports of package modules."""
    for _ in range(_REEXPORTS):
        found = view.module_of(qualified, importer)
        if found is None:
            return False
        path, rest = found
        if path == here:
            return rest == [name]
        if not rest:
            return False
        imported = view.reexport(path, rest[0])
        if imported is None:
            return False
        qualified, importer = ".".join([imported, *rest[1:]]), path
    return False


def _within(node: ast.AST, outer: ast.AST) -> bool:
    return (outer.lineno, outer.col_offset) <= (node.lineno, node.col_offset) and (
        node.end_lineno,
        node.end_col_offset,
    ) <= (outer.end_lineno, outer.end_col_offset)
