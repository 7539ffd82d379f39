"""JAX001 across modules (issue 34): a traced function of this file calls a function or method of
another module of its project with tracers, and that function (or one it calls, there or a
module further) reads a concrete-only member of what it received.

The access itself is in a file that only sees a parameter; it raises because of this file's
trace. So the finding is reported here, at the call, naming where the access is. What counts as
an access is JAX001's own answer (``accesses_of``), asked in the other module's context for the
function as if traced there with the parameters this call passes tracers to.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from jax_codemod.analysis.classes import classes_for
from jax_codemod.analysis.context import FileContext
from jax_codemod.analysis.module_text import attributes_read, module_aliases, source_text, whole_word_starts
from jax_codemod.analysis.tracing import (
    CALLED_IN_TRACE,
    Region,
    Reported,
    Traced,
    partial_binding,
    partial_constants,
    traced_parameters,
    tracing_for,
)
from jax_codemod.analysis.transforms import Spellings, spellings_of
from jax_codemod.analysis.values import FUNCTION
from jax_codemod.analysis.words import called_positions, decorated_def_lines, lines_of
from jax_codemod.rules._access_text import names_transform, transform_calls

# How many modules a tracer is followed through (a helper's helper in a third module).
MAX_MODULES = 4


HELPERS, INHERITED = "helpers", "inherited"


def reaches_across(source: bytes | None, text: str | None, project, access_text) -> str | None:
    """From texts alone, whether the file can have a finding through another module of its
    project: ``INHERITED`` when it has access text and a class whose base it imports leads to a
    transform (a base class whose traced method may call an override here); ``HELPERS`` when it
    traces and imports a name that leads to access text (a helper it may call with tracers);
    else None. ``access_text``: JAX001's ``AccessText``; ``text``: the decoded ``source``, or None
    (the gate's: ``module_text.source_text``); ``source``: None where only the text is at hand
    (encoded only for a file that imports something of its project)."""
    if text is None:
        text = source_text(source)
    # Every answer below goes through a name the file imports from its project: most files
    # import none (one scan of their import lines, which the later questions reuse).
    if not project.imports_project(text):
        return None
    if source is None:
        source = text.encode("utf-8", "surrogatepass")
    if b"class" in source and access_text.may_access(source):
        bases = _base_words(text)
        # The base class's own block shows a traced method (or a re-export leads to one).
        if bases and project.reaches("traced-method", _traces_a_method, text, bases.__contains__, follow=False):
            return INHERITED
    # A file that traces: it imports JAX, or decorates with a project name that is a transform
    # (asked of the text in that order, the transform spellings last: a file that names none of
    # them is scanned for each).
    traces = imports_jax(source)
    decorators = None
    if not traces:
        if b"@" not in source:
            return None
        decorators = {match.group(1) for line in _decorator_lines(text) if (match := _DECORATOR_NAME.match(line))}
        if not decorators:
            return None
    if not names_transform(source):
        return None
    if decorators is not None:
        traces = project.reaches("transform", _names_transform_text, text, decorators.__contains__, follow="module")
        # Decorated with another module's transform alias, in a file that names no `jax` (which
        # JAX001's own prefilter needs): its own accesses run in that trace.
        if traces and access_text.may_access(source):
            return HELPERS
    # ...and imports a helper, or a helper's helper beside it in its module, with access text.
    if traces and project.reaches("traced-access", _in_module(access_text), text, follow="module"):
        return HELPERS
    return None


class AccessInModule:
    """JAX001's access text as the gate asks it of another module's blocks: a consumer called
    through a name that module binds to a JAX module (`jp.array(x)` with `from jax import numpy
    as jp`, brax's spelling) is none, as the analysis resolves it (JAX's functions take
    tracers). The text of a whole module reads its own imports."""

    def __init__(self, access_text) -> None:
        self.access_text = access_text

    def __call__(self, text: str) -> bool:
        return self.in_block(text, 0, len(text))

    def in_block(self, module_text: str, start: int, end: int) -> bool:
        block = module_text[start:end] if start or end != len(module_text) else module_text
        return self.access_text.any_access_line(block, module_aliases(module_text, "jax"))


@lru_cache(maxsize=4)
def _in_module(access_text) -> AccessInModule:
    """The one predicate of JAX001's ``AccessText`` (the question's answers are kept by key)."""
    return AccessInModule(access_text)


def imports_jax(source: bytes) -> bool:
    """Whether ``source`` spells an import of jax (`import jax`, `from jax.numpy import ...`), not
    of a name that starts with it (warp's `from warp._src.jax.ffi import jax_kernel`)."""
    for spelled in (b"import jax", b"from jax"):
        at = source.find(spelled)
        while at != -1:
            after = source[at + len(spelled) : at + len(spelled) + 1]
            if not (after.isalnum() or after == b"_"):
                return True
            at = source.find(spelled, at + 1)
    return False


_WORD = re.compile(r"[A-Za-z_]\w*")


def _base_words(text: str) -> set[str]:
    """The words of every class statement's bases (`class Child(Base, mixins.Hooks):`)."""
    found: set[str] = set()
    position = text.find("class ")
    while position != -1:
        start = text.rfind("\n", 0, position) + 1
        opening = text.find("(", position)
        if not text[start:position].strip(" \t") and opening != -1:
            closing = text.find(")", opening)
            header = text[position + 6 : opening]
            if closing != -1 and header.strip().isidentifier():
                found.update(_WORD.findall(text, opening + 1, closing))
        position = text.find("class ", position + 6)
    return found


# What a base class's block shows where one of its methods is traced: a decorator naming a
# transform (`@jax.jit`, `@partial(jax.jit, ...)`, `@eqx.filter_jit`) or a transform called on a
# method (`jax.jit(self.step)`); a project's own alias (`@compiled`) names none of them, but
# `names_transform` already asked its module (a decorator imported from the project).
def _names_transform_text(text: str) -> bool:
    return names_transform(text.encode("utf-8", "surrogatepass"))


def _traces_a_method(text: str) -> bool:
    if not _names_transform_text(text):
        return False
    return any(_TRACED_DECORATOR.search(line) for line in _decorator_lines(text)) or _TRACED_CALL.search(text) is not None


# A decorator that is a bare name, called or not (`@compiled`, `@compiled(n=2)`), at a line's `@`.
_DECORATOR_NAME = re.compile(r"@[ \t]*([A-Za-z_]\w*)[ \t]*(?:\(|#|\r?$)")


_TRACED_DECORATOR = re.compile(r"\b(?:\w*jit|pmap|vmap|shard_map|grad|value_and_grad|remat|checkpoint|named_call)\b")
_TRACED_CALL = re.compile(r"(?:jit|pmap|vmap|shard_map|grad|remat|checkpoint)[ \t]*\([ \t]*self\.")


def _decorator_lines(text: str) -> list[str]:
    found = []
    position = text.find("@")
    while position != -1:
        start = text.rfind("\n", 0, position) + 1
        end = text.find("\n", position)
        if not text[start:position].strip(" \t"):
            found.append(text[position : end if end != -1 else len(text)])
        position = text.find("@", position + 1)
    return found


def across_region(ctx: FileContext, spellings, access_text) -> Region | None:
    """Where a traced function of the file can call another module's function: the lines that
    call a name imported from the project, and the lines of decorated functions (the whole file
    when a class derives from a project class: its `self` calls reach that class's methods);
    None when the file imports nothing of its project it calls."""
    project = ctx.project
    imported = {
        name: target for name, target in ctx._bindings.items()
        if isinstance(target, str) and project.module_of(target) is not None
    }
    if not imported:
        return None
    if set(imported) & _base_words(ctx.text):
        return tracing_for(ctx).whole_region
    # Only the names whose own text (or a helper's beside it) holds an access matter (a module
    # imported whole: its text).
    imported = {
        name for name, target in imported.items()
        if any(
            project.name_reaches("traced-access", _in_module(access_text), qualified, follow="module")
            for qualified in _read_through(ctx.text, name, target, project)
        )
    }
    if not imported:
        return None
    text = ctx.text
    uses = sorted(
        called_positions(text, imported, table=frozenset())
        + _attribute_positions(text, imported)
        + _passed_positions(text, imported)
    )
    if not uses:
        return None
    lines = lines_of(text, uses) | decorated_def_lines(text) | lines_of(text, sorted(transform_calls(text, spellings)))
    return Region(ctx.tree, sorted(lines))


def _read_through(text: str, name: str, target: str, project) -> list[str]:
    """``target`` (what ``name`` is imported as), or for a module bound whole (`import tools`)
    the names the file reads of it (`tools.to_host`, re-exported by `tools/__init__.py`): the
    module's text elsewhere runs only through them."""
    found = project.module_of(target)
    return attributes_read(text, name, (target,)) if found is not None and not found[1] else [target]


def _passed_positions(text: str, names: set[str]) -> list[int]:
    """Where one of ``names`` is an argument, as it is (`jax.jit(to_host)`, `jax.vmap(f, 0)`): a
    transform applied to another module's function runs it in the trace."""
    return [
        at for name in names for at in whole_word_starts(text, name)
        if not text.endswith(".", 0, at) and text[at + len(name) : at + len(name) + 16].lstrip(" \t")[:1] in (")", ",")
    ]


def _attribute_positions(text: str, names: set[str]) -> list[int]:
    """Where one of ``names`` is read an attribute of (`interop.to_numpy`): a module's functions."""
    found = []
    for name in names:
        position = text.find(name + ".")
        while position != -1:
            if not position or not (text[position - 1].isalnum() or text[position - 1] in "_."):
                found.append(position)
            position = text.find(name + ".", position + 1)
    return found


@dataclass(frozen=True)
class Across:
    call: ast.Call  # in the checked file
    callee: str  # `to_host` or `Model.on_batch`
    traced: Traced  # the traced function of the checked file that makes the call
    access: object  # JAX001's Access, in ``ctx``
    ctx: FileContext  # the module that holds the access
    # ``call`` applies the transform to the other module's function itself (`jax.jit(to_host)`).
    applied: bool = False

    @property
    def where(self) -> str:
        return f"`{self.ctx.root_path or self.ctx.path}` line {self.access.node.lineno}"

    @property
    def message(self) -> str:
        access = self.access
        receiver = ast.unparse(access.receiver)
        what = f"`{receiver}{access.label}`" if access.label.startswith(".") else f"`{access.label[:-1]}{receiver})`"
        if self.applied:
            return (
                f"`{self.callee}` ({self.where}) runs {what} on its argument, which `{self.traced.transform}` "
                "makes a tracer here, and that needs a concrete array; no automatic fix (the access is in "
                "another module): transform a function that does not need concrete values, or do that "
                "access on the concrete result"
            )
        return (
            f"`{self.callee}` ({self.where}) runs {what} on what this call passes it, a tracer inside "
            f"`{self.traced.transform}` here, and that needs a concrete array; no automatic fix (the access is in "
            "another module): call it outside the traced function on the concrete array, or take it from the result"
        )


def calls_across(
    ctx: FileContext,
    accesses_of: Callable[[FileContext, Traced], list],
    reported: Reported,
    access_text,
) -> list[Across]:
    """Each call of a traced function of this file (around the lines that call what the
    project's other modules define, ``across_region``) that hands tracers to another module's
    function whose trace there reaches a concrete-only access (``accesses_of``: JAX001's)."""
    spellings = spellings_of(ctx)
    region = across_region(ctx, spellings, access_text)
    if region is None:
        return []
    found = []
    answer = tracing_for(ctx)
    traced_functions = answer.traced_functions(region, spellings, reported)
    may = _may_reach(ctx, access_text)
    for traced in traced_functions:
        for call, owner, function, params in answer.calls_leaving(traced, reported, may):
            caller = _name(tracing_for(ctx), traced.node)
            hit = _reached(owner, function, params, traced, caller, accesses_of, reported, 0)
            if hit is not None:
                access, holder = hit
                found.append(Across(call, _name(tracing_for(owner), function), traced, access, holder))
    found += _transformed_across(ctx, region, spellings, may, accesses_of, reported)
    return found


def _transformed_across(ctx: FileContext, region: Region, spellings: Spellings, may, accesses_of, reported) -> list[Across]:
    """Transforms this file applies to another module's function itself (`jax.jit(to_host)`,
    `jax.vmap(interop.to_numpy)(x)`): that function runs in the trace with the parameters the
    transform traces, so an access it reaches raises here."""
    found = []
    analysis = ctx.analysis
    for node in region.nodes:
        if node.__class__ is not ast.Call:
            continue
        hit = spellings.applied(node)
        if hit is None:
            continue
        transform, positions = hit
        for position in positions:
            if position >= len(node.args):
                continue
            # `jax.jit(partial(to_host, scale=2.0))`: the function, its bound arguments constants.
            argument, fixed = partial_binding(ctx, node.args[position])
            if not isinstance(argument, (ast.Name, ast.Attribute, ast.Call)) or not may(ast.Call(func=argument, args=[], keywords=[])):
                continue
            value = analysis.value_of(argument)
            function, bound = value.node, False
            # `jax.vmap(model)`: the `__call__` of another module's class; `jax.jit(model.apply)`:
            # flax runs a Module's `__call__` with every argument but the variables (options
            # would count apply's positions, not `__call__`'s).
            method = analysis.instance_call(argument)
            if method is None and not transform.options:
                method = analysis.applied_method(argument)
            if method is not None and method.analysis is not analysis:
                other, function, bound = method.analysis.ctx, method.function, True
            elif value.kind != FUNCTION or value.owner in (None, ctx.root_path) or not isinstance(function, ast.FunctionDef):
                continue
            else:
                other = ctx.project.context(value.owner)
            if other is None:
                continue
            parameters = traced_parameters(function, transform, bound)
            if not parameters or not parameters[0]:
                continue  # options this file cannot read: which arguments are traced is unknown
            traced = parameters[0] - partial_constants(function, fixed, bound) if fixed is not None else parameters[0]
            if not traced:
                continue
            seed = Traced(function, transform.name, traced)
            # As a helper: only what surely runs on the tracer counts (a library-like function
            # often guards, `if isinstance(x, core.Tracer): return x`).
            reached = _reached(other, function, traced, seed, transform.name, accesses_of, reported, 0)
            if reached is not None:
                access, holder = reached
                found.append(Across(node, _name(tracing_for(other), function), seed, access, holder, applied=True))
    return found


def _may_reach(ctx: FileContext, access_text) -> Callable[[ast.Call], bool]:
    """From the text, whether a call may run another module's function that leads to an
    access: a name imported from the project (or an attribute of one) whose text does; a
    method of `self` or of some other value (the analysis decides)."""
    bindings, project = ctx._bindings, ctx.project
    defined = {s.name for s in ctx.tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}

    def may(call: ast.Call) -> bool:
        func, chain = call.func, []
        if isinstance(func, ast.Call):
            func = func.func  # `Model(scale)(x)`: the `__call__` of what the class's module defines
        while isinstance(func, ast.Attribute):
            chain.append(func.attr)
            func = func.value
        if not isinstance(func, ast.Name):
            return bool(chain)
        target = bindings.get(func.id)
        if not isinstance(target, str):
            # `self.hook(x)`, `model.apply(x)`: a method of a value; `model(x)`: a value called,
            # unless the name is this file's own function or class.
            return bool(chain) or (func.id not in defined and call.func.__class__ is ast.Name)
        qualified = ".".join([target, *reversed(chain)])
        return project.name_reaches("traced-access", _in_module(access_text), qualified, follow="module")

    return may


def _reached(owner: FileContext, function, params, traced: Traced, caller: str, accesses_of, reported, depth: int):
    """The first access ``function`` (of ``owner``) reaches when traced with ``params``: (the
    access, the context that holds it)."""
    memo = owner.__dict__.setdefault("_accesses_across", {})
    key = (function, params, traced.transform)
    if key in memo:
        return memo[key]
    memo[key] = None  # a recursion through modules finds nothing more
    seed = Traced(
        function, traced.transform, params, obstacle=(CALLED_IN_TRACE, caller), caller=caller,
        transforms=set(traced.transforms),
    )
    answer = tracing_for(owner)
    hit = None
    for reached in answer.reached_from(seed, reported):
        accesses = accesses_of(owner, reached)
        if accesses:
            hit = (accesses[0], owner)
            break
        if depth + 1 < MAX_MODULES:
            for _call, other, target, more in answer.calls_leaving(reached, reported):
                hit = _reached(other, target, more, reached, _name(answer, reached.node), accesses_of, reported, depth + 1)
                if hit is not None:
                    break
        if hit is not None:
            break
    memo[key] = hit
    return hit


def _name(answer, function) -> str:
    name = getattr(function, "name", "<lambda>")
    owner = classes_for(answer.ctx).owner(function)
    return f"{owner.name}.{name}" if owner is not None else name
