"""The hoist/split rewrite: a jitted function whose concrete-only statements (JAX001's
accesses) can run before the trace becomes a traced copy under a private name and a plain
wrapper with the original name and signature that runs those statements on the concrete
arguments and forwards every argument to the copy.

``plan_split(ctx, region, traced, accesses)`` decides (a ``SplitPlan``, carried in
``Finding.data``, or the reason there is none); ``split(module, plans)`` rewrites the libcst
module, one function per plan.
"""

from __future__ import annotations

import ast
import re
import weakref
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from jax_codemod.analysis import api
from jax_codemod.analysis.names import canonical
from jax_codemod.analysis.taint import STATIC_ATTRS, param_root
from jax_codemod.analysis.tracing import Region, Traced, tracing_for
from jax_codemod.analysis.transforms import JIT, TRANSPARENT, all_params
from jax_codemod.rule import FixSafety

if TYPE_CHECKING:
    import libcst as cst
    from jax_codemod.analysis.context import FileContext

# Calls that keep a static value static (`n = math.prod(x.shape)`).
STATIC_BUILTINS = frozenset({"len", "int", "float", "bool", "tuple", "min", "max", "abs"})
STATIC_FUNCTIONS = frozenset({"math.prod", "numpy.prod"})
# Attributes of a jitted function that a plain wrapper does not have.
JITTED_ATTRS = frozenset({"lower", "trace", "eval_shape", "clear_cache", "_cache_size", "__wrapped__"})
_HOISTABLE = (ast.Expr, ast.Assign, ast.AnnAssign)
_UNSPLITTABLE = (ast.Yield, ast.YieldFrom, ast.Await, ast.NamedExpr, ast.Global, ast.Nonlocal)


@dataclass(frozen=True)
class SplitPlan:
    """How to split one jitted function; carried in Finding.data."""

    key: tuple[int, int]  # the `def` keyword's position, as libcst reports it
    traced_name: str
    call: str
    hoisted_lines: tuple[int, ...]
    copied_lines: tuple[int, ...]  # static statements the wrapper repeats
    docstring_line: int | None
    # (decorator index, `jax.jit` as spelled, its options' source) for `@jax.jit(...)`.
    jit_options: tuple[int, str, str] | None = None


def plan_split(
    ctx: FileContext, region: Region, traced: Traced, accesses
) -> tuple[SplitPlan | None, FixSafety, str | None]:
    """(plan, fix safety, reason): a plan when the accesses can leave the trace. ``accesses``:
    the rule's findings in ``traced``'s function, each with ``node``, ``label`` (".delete()" for
    a deletion) and ``param`` (the traced parameter it reads, None for an intermediate)."""
    function = traced.node
    if any(access.param is None for access in accesses):
        return None, FixSafety.NONE, "the function also reads a concrete-only API of an intermediate"
    if any(access.label == ".delete()" for access in accesses):
        return None, FixSafety.NONE, "deleting the argument before the call would break the call"
    body = list(function.body)
    docstring = body.pop(0) if _is_docstring(body[0]) else None
    seeds = {id(s): s for s in body if any(s.lineno <= a.node.lineno <= s.end_lineno for a in accesses)}
    hoisted, reason = _hoisted_statements(ctx, function, body, seeds)
    if not reason:
        static = {a.arg for a in all_params(function)} - traced.traced
        reason, copies = _dependency_problem(ctx, function, body, hoisted, static)
    if reason:
        return None, FixSafety.NONE, reason
    needed = _needed_in_trace(body, hoisted, copies)
    hoisted = [s for s in body if s in hoisted or (s in copies and s not in needed)]
    copies = needed
    if len(hoisted) == len(body):
        return None, FixSafety.NONE, "nothing would be left to trace"
    is_method = isinstance(region.parents.get(function), ast.ClassDef)
    reason = _unsplittable(ctx, function, body, hoisted) or _used_by_importers(
        ctx, function, region.parents.get(function) if is_method else None
    )
    if reason:
        return None, FixSafety.NONE, reason
    traced_name = _fresh_name(ctx, function.name)
    call = _forwarding_call(function, traced_name, is_method)
    if call is None:
        return None, FixSafety.NONE, "a method without a positional `self` cannot be split automatically"
    fix = FixSafety.SAFE
    if _has_traced_defaults(function, traced.traced) or {a.param for a in accesses} & traced.donated:
        fix = FixSafety.UNSAFE
    span = ctx.span(function)
    plan = SplitPlan(
        key=(span.start_line, span.start_column),
        traced_name=traced_name,
        call=call,
        hoisted_lines=tuple(statement.lineno for statement in hoisted),
        copied_lines=tuple(statement.lineno for statement in copies),
        docstring_line=docstring.lineno if docstring else None,
        jit_options=_jit_options(ctx, function),
    )
    return plan, fix, None


def _jit_options(ctx: FileContext, function) -> tuple[int, str, str] | None:
    for index, decorator in enumerate(function.decorator_list):
        if (
            isinstance(decorator, ast.Call)
            and not decorator.args
            and decorator.keywords
            and canonical(ctx.qualname(decorator.func)) == JIT
        ):
            options = ", ".join(ctx.source_of(keyword) for keyword in decorator.keywords)
            return index, ctx.source_of(decorator.func), options
    return None


def _is_docstring(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


def _hoisted_statements(ctx: FileContext, function, body: list[ast.stmt], seeds: dict[int, ast.stmt]):
    """The body statements to move out: the accessing ones and those reading their names."""
    chosen = {id(s) for s in body if id(s) in seeds}
    params = {a.arg for a in all_params(function)}
    while True:
        assigned = {name for s in body if id(s) in chosen for name in _assigned(s)}
        readers = {id(s) for s in body if id(s) not in chosen and _reads(s) & assigned}
        if not readers:
            break
        chosen |= readers
    hoisted = [s for s in body if id(s) in chosen]
    for statement in hoisted:
        if isinstance(statement, ast.Return):
            return [], "its value flows into the function's result"
        if _simple(statement):
            continue
        if id(statement) in seeds and _movable_block(ctx, statement, params):
            continue
        if id(statement) not in seeds:
            return [], "its value flows into the traced computation"
        if isinstance(statement, ast.If) and not _type_test(ctx, statement.test, params):
            return [], "it is inside an `if` whose test a tracer may answer differently than the concrete argument"
        if isinstance(statement, ast.With):
            return [], "it is inside a `with` block whose context the traced computation may need"
        return [], "it is inside a compound statement"
    return hoisted, None


def _movable_block(ctx: FileContext, statement: ast.stmt, params: set[str]) -> bool:
    """A compound statement that can leave the trace whole: a `for` over an argument or its
    pytree leaves, a `with jax.named_scope(...)` (it only names traced operations) or a host
    library's context (`with torch.no_grad():`, which the trace never sees), or an `if` that
    tests only the arguments' types and static attributes (`if isinstance(x, jax.Array):`:
    a tracer is a `jax.Array`, so the concrete argument takes the branch the trace took),
    whose body is simple side-effect statements."""
    if isinstance(statement, ast.For):
        if statement.orelse or param_root(tracing_for(ctx).leaves_of(statement.iter)) is None:
            return False
    elif isinstance(statement, ast.With):
        if not all(
            isinstance(item.context_expr, ast.Call)
            and _host_context(canonical(ctx.qualname(item.context_expr.func)))
            and item.optional_vars is None
            for item in statement.items
        ):
            return False
    elif isinstance(statement, ast.If):
        if not _type_test(ctx, statement.test, params):
            return False
        return _movable_body(ctx, statement.body, params) and _movable_body(ctx, statement.orelse, params)
    else:
        return False
    return _movable_body(ctx, statement.body, params)


def _movable_body(ctx: FileContext, body: list[ast.stmt], params: set[str]) -> bool:
    for inner in body:
        if isinstance(inner, (ast.For, ast.With, ast.If)):
            if not _movable_block(ctx, inner, params):
                return False
        elif not _simple(inner):
            return False
    return True


def _simple(statement: ast.stmt) -> bool:
    """A side-effect statement that can run before the trace: an expression, an assignment, an
    `assert` (it checks the concrete argument instead of failing on the tracer)."""
    return isinstance(statement, ast.Assert) or (
        isinstance(statement, _HOISTABLE) and getattr(statement, "value", None) is not None
    )


# Context managers a hoisted block may keep around it: JAX's names for traced operations, and
# host libraries' that a trace never sees (torch's autograd modes, Python's warning filters).
HOST_CONTEXTS = frozenset(
    {"torch.no_grad", "torch.inference_mode", "torch.enable_grad", "torch.set_grad_enabled", "warnings.catch_warnings"}
)


def _host_context(name: str | None) -> bool:
    return name in TRANSPARENT or name in HOST_CONTEXTS


# The types a test may ask an argument about: a tracer is an instance of each (as a concrete JAX
# array is), so the branch the wrapper takes on a JAX array is the trace's. (`np.ndarray`,
# `jax.core.Tracer` or `hasattr(x, "sharding")` answer differently for the tracer.)
JAX_ARRAY_TYPES = frozenset(api.table("array_type", array_type="jax"))


def _array_type(ctx: FileContext, expr: ast.expr) -> bool:
    if isinstance(expr, ast.Tuple):
        return bool(expr.elts) and all(_array_type(ctx, element) for element in expr.elts)
    return canonical(ctx.qualname(expr)) in JAX_ARRAY_TYPES


def _type_test(ctx: FileContext, test: ast.expr, params: set[str]) -> bool:
    """Whether ``test`` reads only whether arguments are JAX arrays (`isinstance(x, jax.Array)`)
    and their static attributes (`x.ndim > 1`) of the arguments ``params``, and outer names and
    constants: the concrete argument gives the answer its tracer gave. (A local it reads is
    judged as any hoisted statement's: ``_dependency_problem``.)"""
    if isinstance(test, ast.BoolOp):
        return all(_type_test(ctx, value, params) for value in test.values)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _type_test(ctx, test.operand, params)
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance":
        return (
            not ctx.is_bound("isinstance")
            and not test.keywords
            and len(test.args) == 2
            and param_root(test.args[0]) in params
            and _array_type(ctx, test.args[1])
        )
    return _is_static(ctx, test, set(), params)


def _block_bound(statement: ast.stmt) -> set[str]:
    """Names a moved loop binds for its own body (`leaf` in `for leaf in ...`)."""
    if isinstance(statement, ast.For):
        return {n.id for n in ast.walk(statement.target) if isinstance(n, ast.Name)}
    return set()


def _dependency_problem(ctx: FileContext, function, body, hoisted, static: set[str]):
    """(reason, copies): why the hoisted statements cannot run before the trace, or the
    static statements (`n = x.shape[0]`) they need copied into the wrapper."""
    params = {a.arg for a in all_params(function)}
    local = tracing_for(ctx).stored_names(function) | {
        node.name for node in tracing_for(ctx).scope_nodes(function) if isinstance(node, (ast.FunctionDef, ast.ClassDef))
    }
    hoisted_names: set[str] = set()
    copies: list[ast.stmt] = []
    for statement in hoisted:
        if any(isinstance(node, _UNSPLITTABLE) for node in ast.walk(statement)):
            return "it assigns or yields inside an expression", []
        for name in sorted(_reads(statement) - params - hoisted_names - _block_bound(statement)):
            if name in local:
                unknown = local | (params - static)
                copy = _static_definition(
                    ctx, body, hoisted, statement, name, static | hoisted_names, unknown
                )
                if copy is None:
                    return f"it reads `{name}`, a value computed inside the trace", []
                copies.append(copy)
                hoisted_names.add(name)
        assigned = _assigned(statement)
        if assigned & params:
            return "it rebinds a parameter", []
        hoisted_names |= assigned
    return _read_back_problem(
        body, hoisted, hoisted_names - {n for c in copies for n in _assigned(c)}
    ), copies


def _static_definition(ctx, body, hoisted, reader, name, known: set[str], unknown: set[str]):
    """The one statement before ``reader`` that binds ``name`` from shapes, dtypes and constants."""
    definitions = [s for s in body if name in _assigned(s)]
    if len(definitions) != 1 or definitions[0] in hoisted:
        return None
    [definition] = definitions
    if not (
        isinstance(definition, ast.Assign)
        and definition.end_lineno < reader.lineno
        and all(isinstance(target, ast.Name) for target in definition.targets)
        and _is_static(ctx, definition.value, known, unknown)
    ):
        return None
    return definition


def _is_static(ctx: FileContext, expr: ast.AST, known: set[str], unknown: set[str]) -> bool:
    """Whether ``expr`` is computed from static attributes, static arguments, outer names and
    constants; ``unknown``: the names it must not read (tracers and other locals)."""
    if isinstance(expr, ast.Constant):
        return True
    if isinstance(expr, ast.Name):
        return expr.id in known or expr.id not in unknown
    if isinstance(expr, ast.Attribute) and expr.attr in STATIC_ATTRS:
        return param_root(expr.value) is not None or _is_static(ctx, expr.value, known, unknown)
    if isinstance(expr, ast.Call):
        name = expr.func.id if isinstance(expr.func, ast.Name) else None
        if not (name in STATIC_BUILTINS or ctx.qualname(expr.func) in STATIC_FUNCTIONS) or expr.keywords:
            return False
        return all(_is_static(ctx, a, known, unknown) or name == "len" and param_root(a) for a in expr.args)
    if isinstance(expr, (ast.Subscript, ast.Slice, ast.BinOp, ast.UnaryOp, ast.Compare, ast.Tuple, ast.List)):
        children = [
            c
            for c in ast.iter_child_nodes(expr)
            if not isinstance(c, (ast.operator, ast.unaryop, ast.cmpop, ast.expr_context))
        ]
        return all(_is_static(ctx, child, known, unknown) for child in children)
    return False


def _needed_in_trace(body, hoisted, copies) -> list[ast.stmt]:
    """The copied statements the traced body still reads; the others can simply move."""
    readers = [s for s in body if s not in hoisted and s not in copies]
    pending, needed = list(copies), []
    changed = True
    while changed:
        changed = False
        for copy in list(pending):
            if any(_assigned(copy) & _reads(reader) for reader in readers):
                pending.remove(copy)
                needed.append(copy)
                readers.append(copy)
                changed = True
    return needed


def _read_back_problem(body, hoisted, hoisted_names: set[str]) -> str | None:
    rest = [s for s in body if s not in hoisted]
    if any(_assigned(s) & hoisted_names for s in rest):
        return "its names are reassigned inside the trace"
    # `self.ptr = ...` read back by the trace would be baked into the compiled function.
    stored = {ast.unparse(target) for statement in hoisted for target in _item_targets(statement)}
    for statement in rest:
        for node in ast.walk(statement):
            if isinstance(node, (ast.Attribute, ast.Subscript)) and ast.unparse(node) in stored:
                return "the trace reads back what it stores"
    return None


def _item_targets(statement: ast.stmt) -> list[ast.expr]:
    targets = statement.targets if isinstance(statement, ast.Assign) else [getattr(statement, "target", None)]
    return [target for target in targets if isinstance(target, (ast.Attribute, ast.Subscript))]


def _assigned(statement: ast.stmt) -> set[str]:
    """Names a statement binds in the function (comprehension variables are their own scope)."""
    stored = {n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return stored - _locally_bound(statement)


def _reads(statement: ast.stmt) -> set[str]:
    """Free names a statement reads."""
    loaded = {n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return loaded - _locally_bound(statement)


def _locally_bound(statement: ast.stmt) -> set[str]:
    bound = set()
    for node in ast.walk(statement):
        if isinstance(node, ast.comprehension):
            bound |= {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.Lambda):
            bound |= {a.arg for a in all_params(node)}
    return bound


def _unsplittable(ctx: FileContext, function, body, hoisted) -> str | None:
    lines = [s.lineno for s in function.body]
    for statement in hoisted:
        index = function.body.index(statement)
        following = function.body[index + 1] if index + 1 < len(function.body) else None
        if lines.count(statement.lineno) > 1 or (following and following.lineno == statement.end_lineno):
            return "it shares a line with another statement"
    if any(isinstance(node, (ast.Global, ast.Nonlocal)) for node in tracing_for(ctx).scope_nodes(function)):
        return "it declares `global` or `nonlocal` names"
    name, attributes = re.escape(function.name), "|".join(JITTED_ATTRS)
    jitted_attribute = re.search(rf"\b{name}\s*\.\s*({attributes})\b", ctx.text) or re.search(
        rf"\b(?:getattr|hasattr)\s*\(\s*{name}\s*,\s*[\"']({attributes})[\"']", ctx.text
    )
    if jitted_attribute:
        return f"the file uses `{function.name}.{jitted_attribute.group(1)}`, which a plain wrapper does not have"
    return None


# How many re-exports (`from .model import step` in a package's `__init__`) a name is followed through.
_REEXPORTS = 8


def _used_by_importers(ctx: FileContext, function, owner: ast.ClassDef | None) -> str | None:
    """Why the wrapper would break another module of the project, or None: a module that imports
    the function (or its module, or its class, for a method) and uses an attribute of the jitted
    object on it (`step.clear_cache()`), which raises AttributeError on the plain wrapper.

    Every module of the root is read (and recorded in the result's dependencies): the question
    is asked only of a function the rule would split, a few in a project."""
    view = ctx.project
    if view is None:
        return None
    name = function.name
    attributes = "|".join(sorted(JITTED_ATTRS))
    for path, text in _other_texts(view):
        if name not in text or not _NAMES_ATTRIBUTE.search(text):
            continue
        prefixes = _spellings_in(view, path, text, name, owner)
        if prefixes is None:
            # A method: any `.name.lower` in a module that imports its class.
            pattern = rf"\.\s*{re.escape(name)}\s*\.\s*({attributes})\b"
        elif prefixes:
            spelled = "|".join(re.escape(p).replace(r"\.", r"\s*\.\s*") for p in sorted(prefixes, key=len, reverse=True))
            pattern = (
                rf"(?<![\w.])(?:{spelled})\s*\.\s*({attributes})\b"
                rf"|\b(?:getattr|hasattr)\s*\(\s*(?:{spelled})\s*,\s*[\"']({attributes})[\"']"
            )
        else:
            continue
        used = re.search(pattern, text)
        if used:
            line = text.count("\n", 0, used.start()) + 1
            shown = f"{owner.name}().{name}" if owner is not None else name
            return (
                f"`{path}` line {line} imports `{shown}` and uses its `{used.group(1) or used.group(2)}`, "
                "which a plain wrapper does not have"
            )
    return None


# The other modules of a checked file's project, read once for all the functions of the file
# that the rule would split (each question reads the whole root; the view lives for one file).
_OTHER_TEXTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_NAMES_ATTRIBUTE = re.compile(rf"\b(?:{'|'.join(sorted(JITTED_ATTRS))})\b")


def _other_texts(view) -> list[tuple[str, str]]:
    """(path, text) of each other module of ``view``'s root (each read, and so recorded in the
    result's dependencies: a module that starts using `step.lower` changes the answer)."""
    found = _OTHER_TEXTS.get(view)
    if found is None:
        found = _OTHER_TEXTS[view] = [
            (path, view.text(path)) for path in sorted(view.root.modules.paths) if path != view.path
        ]
    return found


def _spellings_in(view, path: str, text: str, name: str, owner: ast.ClassDef | None) -> set[str] | None:
    """How the module at ``path`` (its text ``text``) spells the checked file's function ``name``
    (`step`, `model.step`, `pkg.model.step`); for a method (``owner``: its class), None when the
    module imports the class (its instances' spelling is unknown), else an empty set."""
    bound, stars = view.root.file_bindings(path, text)
    wanted = [owner.name] if owner is not None else [name]
    found: set[str] = set()
    for alias, targets in bound.items():
        for qualified in targets:
            if _is_own(view, qualified, path, wanted):
                found.add(alias)
            elif _is_own(view, f"{qualified}.{wanted[0]}", path, wanted):
                # The module (or a package re-exporting the name): `model.step`; `import
                # pkg.model` binds `pkg` and is spelled whole.
                found |= {f"{alias}.{wanted[0]}", f"{qualified}.{wanted[0]}"}
    if any(_is_own(view, f"{star}.{wanted[0]}", path, wanted) for star in stars):
        found.add(wanted[0])
    if owner is not None:
        return None if found else set()
    return found


def _is_own(view, qualified: str, importer: str, wanted: list[str]) -> bool:
    """Whether ``qualified``, read from ``importer``, is the checked file's ``wanted`` path
    (`["step"]`), through the re-exports of package modules."""
    for _ in range(_REEXPORTS):
        found = view.root.module_of(qualified, importer)
        if found is None:
            return False
        path, rest = found
        if path == view.path:
            return rest == wanted
        if not rest:
            return False
        imported = view.reexport(path, rest[0])
        if imported is None:
            return False
        qualified, importer = ".".join([imported, *rest[1:]]), path
    return False


def _fresh_name(ctx: FileContext, name: str) -> str:
    """A private name that appears nowhere in the file."""
    base = f"_{name.strip('_') or 'fn'}_traced"
    candidate, counter = base, 2
    while re.search(rf"\b{candidate}\b", ctx.text):
        candidate, counter = f"{base}{counter}", counter + 1
    return candidate


def _forwarding_call(function, traced_name: str, is_method: bool) -> str | None:
    args = function.args
    positional = [a.arg for a in (*args.posonlyargs, *args.args)]
    callee = traced_name
    if is_method:
        if not positional:
            return None
        callee = f"{positional.pop(0)}.{traced_name}"
    parts = positional[:]
    if args.vararg:
        parts.append(f"*{args.vararg.arg}")
    parts += [f"{a.arg}={a.arg}" for a in args.kwonlyargs]
    if args.kwarg:
        parts.append(f"**{args.kwarg.arg}")
    return f"{callee}({', '.join(parts)})"


def _has_traced_defaults(function, traced: frozenset[str]) -> bool:
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    defaulted = list(zip(positional[len(positional) - len(args.defaults) :], args.defaults))
    defaulted += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
    return any(
        arg.arg in traced and not (isinstance(default, ast.Constant) and default.value is None)
        for arg, default in defaulted
    )


def split(module: cst.Module, plans: dict) -> tuple[cst.Module, int]:
    """Replace each planned function by its traced body and a plain wrapper; (module, splits)."""
    from libcst.metadata import MetadataWrapper

    splitter = _splitter_class()(plans)
    return MetadataWrapper(module, unsafe_skip_copy=True).visit(splitter), splitter.done


@cache
def _splitter_class():
    import libcst as cst
    from libcst.metadata import PositionProvider

    class Splitter(cst.CSTTransformer):
        METADATA_DEPENDENCIES = (PositionProvider,)

        def __init__(self, plans: dict) -> None:
            super().__init__()
            self.plans = dict(plans)
            self.depth = 0
            self.done = 0

        def visit_ClassDef(self, node) -> None:
            self.depth += 1

        def leave_ClassDef(self, original, updated):
            self.depth -= 1
            return updated

        def visit_FunctionDef(self, node) -> None:
            self.depth += 1

        def leave_FunctionDef(self, original, updated):
            self.depth -= 1
            start = self.get_metadata(PositionProvider, original).start
            # By line alone: no two functions start on one line, and libcst's columns on a line
            # indented with a form feed are short of ast's (it drops the form feed).
            key = next((key for key in self.plans if key[0] == start.line), None)
            planned = self.plans.pop(key) if key is not None else None
            if planned is None:
                return updated
            plan, partial = planned
            lines = [self.get_metadata(PositionProvider, s).start.line for s in original.body.body]
            if len(lines) != len(updated.body.body):
                return updated  # a function nested in it was just split; the engine's next pass does this one
            self.done += 1
            kept, moved, docstring = [], [], []
            detached: list = []  # comments above a moved statement, set off by a blank line
            for line, statement in zip(lines, updated.body.body):
                if line == plan.docstring_line:
                    docstring.append(statement)
                elif line in plan.hoisted_lines:
                    own, other = _attached_comments(statement.leading_lines)
                    detached += other
                    moved.append(statement.with_changes(leading_lines=own))
                elif line in plan.copied_lines:
                    moved.append(statement)
                    kept.append(statement)
                else:
                    if detached:
                        # A comment about the traced computation stays with it.
                        statement = statement.with_changes(leading_lines=[*detached, *statement.leading_lines])
                        detached = []
                    kept.append(statement)
            kept[0] = _without_leading_blanks(kept[0])
            moved = [*docstring, *moved]
            moved[0] = _without_leading_blanks(moved[0])
            decorators = list(updated.decorators)
            if plan.jit_options is not None:
                # `@jax.jit(...)` is JAX 0.8.1+; the traced copy uses a spelling every
                # supported JAX accepts.
                index, jit, options = plan.jit_options
                decorators[index] = decorators[index].with_changes(
                    decorator=cst.parse_expression(f"{partial}({jit}, {options})")
                )
            traced = updated.with_changes(
                name=cst.Name(plan.traced_name), decorators=decorators, body=updated.body.with_changes(body=kept)
            )
            returned = cst.parse_statement(f"return {plan.call}\n")
            wrapper = updated.with_changes(
                decorators=[],
                leading_lines=[cst.EmptyLine(indent=False)] * (1 if self.depth else 2),
                lines_after_decorators=[],
                body=updated.body.with_changes(body=[*moved, returned], header=cst.TrailingWhitespace(), footer=[]),
            )
            return cst.FlattenSentinel([traced, wrapper])

    return Splitter


def _attached_comments(leading_lines) -> tuple[list, list]:
    """(the comment lines right above a statement, those set off from it by a blank line)."""
    lines = list(leading_lines)
    last_blank = max((i for i, line in enumerate(lines) if line.comment is None), default=-1)
    detached = lines[: last_blank + 1]
    if not any(line.comment is not None for line in detached):
        return lines, []
    return lines[last_blank + 1 :], detached


def _without_leading_blanks(statement):
    lines = list(statement.leading_lines)
    while lines and lines[0].comment is None:
        lines.pop(0)
    return statement.with_changes(leading_lines=lines)
