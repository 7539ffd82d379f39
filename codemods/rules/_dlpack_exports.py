"""Shared by JAX002 and JAX006: where a JAX array leaves through DLPack or a raw pointer,
and the `ensure_single_device` fix.

An export site hands one expression to a single-device interface (or, through
`jax.tree.map(torch.from_dlpack, tree)`, every leaf of a tree). What the exported value is
and how it is placed is the file's value analysis (`jax_codemod.analysis.values`): JAX002
fixes the JAX arrays known to span several devices and reports those spanning several
processes; JAX006 fixes the JAX arrays whose placement the file cannot know.
"""

from __future__ import annotations

import ast
import bisect
import re
import warnings
import weakref
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from jax_codemod.analysis import api, higher_order
from jax_codemod.analysis import values as v
from jax_codemod.analysis.context import FileContext
from jax_codemod.analysis.guards import callers_catch, caught
from jax_codemod.analysis.scopes import COMPREHENSIONS, FUNCTIONS, TRY_STAR, bound_names, scope_nodes
from jax_codemod.analysis.module_text import source_text, whole_word_starts
from jax_codemod.analysis.project import MAX_PARSED_CHARS
from jax_codemod.analysis.words import word_starts
from jax_codemod.engine.fixer import Fixer, insert_after_preamble
from jax_codemod.rule import Finding, FixSafety, Rule
from jax_codemod.rules._shared import alone_on_its_lines

if TYPE_CHECKING:
    import libcst as cst

HELPER = "ensure_single_device"
HELPER_MODULE_OPTION = "helper-module"

# Consumers that take an object speaking the array protocol and ask it for one buffer
# (`analysis.qualname` gives public spellings).
CONSUMERS = api.public_names(takes_arrays=True)
# ... and conversions that read a JAX array through DLPack (`torch.as_tensor(x)`): the same export.
CONVERSIONS = api.public_names(dlpack_conversion=True)
DLPACK_METHODS = frozenset({"__dlpack__", "__dlpack_device__"})
# A raw pointer does not keep the buffer alive: the gathered copy must outlive the statement.
POINTER_METHODS = frozenset({"unsafe_buffer_pointer"})
POINTER_ATTRIBUTES = frozenset({"__cuda_array_interface__"})

# Mentioning these on the exported value, or in a condition around the export, is a guard.
GUARD_ATTRIBUTES = frozenset(
    {
        "sharding",
        "device_set",
        "is_fully_addressable",
        "is_fully_replicated",
        "addressable_data",
        "addressable_shards",
        "platform",
        "devices",
        "device_count",
        "local_device_count",
        "default_backend",
        "process_count",
    }
)
GUARD_EXCEPTIONS = {
    "dlpack": frozenset({"BufferError"}),
    "pointer": frozenset(
        {"RuntimeError", "ValueError", "JaxRuntimeError", "XlaRuntimeError", "AttributeError"}
    ),
}
WRAPPABLE = {
    "Name": "Name",
    "Attribute": "Attribute",
    "Call": "Call",
    "Subscript": "Subscript",
    "BinOp": "BinaryOperation",
    "UnaryOp": "UnaryOperation",
}
# How a finding is fixed; carried in Finding.data.
WRAP = "wrap"  # x -> ensure_single_device(x), inside the export
WRAP_LEAVES = "leaves"  # tree -> tree_map(ensure_single_device, tree), in a tree map of a consumer
REBIND = "rebind"  # x = ensure_single_device(x) before the statement (raw pointers)

HELPER_SOURCE = f'''def {HELPER}(x):
    """Gather a multi-device JAX array onto one device (added by codemod).

    DLPack and raw buffer pointers describe one device's memory. The lowest-id device of
    the array's own sharding is used, so no copy crosses backends, unless that platform
    exports nothing (a TPU, a plugin backend): then JAX's CPU device. Anything that is not
    a multi-device JAX array, or spans processes, is returned unchanged.
    """
    devices = getattr(getattr(x, "sharding", None), "device_set", None)
    if devices is None or len(devices) <= 1 or not getattr(x, "is_fully_addressable", True):
        return x
    import jax

    try:
        x.addressable_shards[0].data.__dlpack_device__()
    except BufferError:  # this platform's memory has no export: gather on the host
        return jax.device_put(x, jax.devices("cpu")[0])
    return jax.device_put(x, min(devices, key=lambda device: device.id))
'''


@dataclass(frozen=True)
class Export:
    value: ast.expr  # the array handed over
    site: ast.AST  # the consumer call, method call or attribute
    via: str  # how it is handed over, for messages
    pointer: bool
    forbids_copy: bool
    leaves: bool = False  # the consumer is mapped over the leaves of ``value`` (jax.tree.map)
    elements: bool = False  # ... over the elements of ``value`` (the builtin map)
    # The export happens in another module of the project, in a function ``site`` calls with
    # ``value`` (issue 34): where, for messages ("`to_torch` in `pkg/interop.py` line 6").
    through: str | None = None
    # ... or in a method of another module's class that exports ``self.<field>``, called on an
    # instance (``value``) this file built: the field, and what it holds here.
    field: str | None = None
    held: v.Value | None = None

    @property
    def error(self) -> str:
        """What the export raises for a multi-device array on current JAX."""
        if not self.pointer:
            return "BufferError"
        return "AttributeError" if self.via == "`.__cuda_array_interface__`" else "JaxRuntimeError"


_EXPORT_WORD = re.compile(r"dlpack|unsafe_buffer_pointer|__cuda_array_interface__|as_tensor\(|\btensor\(")
# ``_EXPORT_WORD``'s alternatives searched as text (`tensor(` with the boundary: ``_export_lines``).
_EXPORT_LITERALS = ("dlpack", "unsafe_buffer_pointer", "__cuda_array_interface__", "as_tensor(")
# `dl = importlib.import_module("torch.utils.dlpack")`: a consumer spelled without the word.
# `from numpy import from_dlpack as to_host`: a consumer spelled without the word.
_CONSUMER_ALIAS = re.compile(r"\bfrom_dlpack\s+as\s+(\w+)")
# The same without its leading \b, which keeps the regex engine from jumping to "from_dlpack"
# (it tried a match at every character): _consumer_aliases checks the boundary itself.
_CONSUMER_ALIAS_FAST = re.compile(r"from_dlpack\s+as\s+(\w+)")
_WORD_CHAR = re.compile(r"\w")


def _consumer_aliases(text: str) -> list[str]:
    """``_CONSUMER_ALIAS.findall(text)``: the same matches, in order, at a fraction of the cost."""
    found, position = [], 0
    while (match := _CONSUMER_ALIAS_FAST.search(text, position)) is not None:
        start = match.start()
        if start and _WORD_CHAR.match(text, start - 1):
            position = start + 1  # no boundary before it: not a match of the \b pattern here
            continue
        found.append(match.group(1))
        position = match.end()
    return found


def _export_lines(text: str) -> list[int]:
    """Lines that may hold an export, so that only the statements around them are walked: those
    where ``_EXPORT_WORD`` or an alias of a consumer (as a whole word) matches, found one
    ``str.find`` per word (the pattern's `\\b` alternative made the regex engine try it at every
    character of the text: 7 ms on jax's pjit_test.py, for one line)."""
    starts = [at for word in _EXPORT_LITERALS for at in _occurrences(text, word)]
    starts += word_starts(text, "tensor(")
    for alias in set(_consumer_aliases(text)):
        starts += whole_word_starts(text, alias)
    numbers: list[int] = []
    line, counted = 1, 0
    for start in sorted(starts):
        line += FileContext.count_line_breaks(text, counted, start)
        counted = start
        if not numbers or numbers[-1] != line:
            numbers.append(line)
    return numbers


def _nodes_near(tree: ast.Module, lines: list[int]) -> Iterator[ast.AST]:
    """Every node whose source span includes one of ``lines`` (sorted), or that has no span."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            start = getattr(child, "lineno", None)
            if start is not None:
                index = bisect.bisect_left(lines, start)
                if index == len(lines) or lines[index] > child.end_lineno:
                    continue
            stack.append(child)


def find_exports(ctx: FileContext) -> Iterator[Export]:
    analysis = ctx.analysis
    lines = _export_lines(ctx.text)
    for node in _nodes_near(ctx.tree, lines) if lines else ():
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in DLPACK_METHODS | POINTER_METHODS:
                yield Export(
                    func.value, node, f"`.{func.attr}()`", func.attr in POINTER_METHODS, _forbids_copy(node)
                )
            elif (
                node.args
                and not isinstance(node.args[0], ast.Starred)
                and (
                    isinstance(func, ast.Name)
                    or getattr(func, "attr", None) in _CALLED_ATTRIBUTES
                )
            ):
                qualified = analysis.qualname(func)
                if qualified in CONSUMERS or qualified in CONVERSIONS:
                    yield Export(node.args[0], node, f"`{qualified}`", False, _forbids_copy(node))
                elif (
                    (qualified in api.TREE_MAPS or _is_builtin_map(ctx, func))
                    and len(node.args) == 2
                    and not node.keywords
                ):
                    consumer = analysis.qualname(node.args[0])
                    if consumer in CONSUMERS:
                        leaves = qualified in api.TREE_MAPS
                        via = f"`{consumer}` on every {'leaf' if leaves else 'element'}"
                        yield Export(
                            node.args[1], node, via, False, False, leaves=leaves, elements=not leaves
                        )
                else:
                    yield from _run_exports(analysis, node)
        elif (
            isinstance(node, ast.Attribute)
            and node.attr in POINTER_ATTRIBUTES
            and isinstance(node.ctx, ast.Load)
        ):
            yield Export(node.value, node, f"`.{node.attr}`", True, False)


# Attributes whose calls may export: a consumer, a map of one, a higher-order call that runs one.
_CALLED_ATTRIBUTES = (
    frozenset({"from_dlpack", "map", "tree_map"}) | higher_order.NAMES | api.members(dlpack_conversion=True)
)


def _run_exports(analysis, call: ast.Call) -> Iterator[Export]:
    """`pool.submit(torch.from_dlpack, x)`, `asyncio.to_thread(np.from_dlpack, x)`: a consumer
    handed to a higher-order call (``analysis.higher_order``) that runs it with ``x``."""
    run = higher_order.runs(analysis, call)
    if run is None or not run.args or isinstance(run.args[0], ast.Starred):
        return
    consumer = analysis.qualname(run.function)
    if consumer in CONSUMERS:
        yield Export(run.args[0], call, f"`{consumer}` run by `{run.by}`", False, False)


def _forbids_copy(call: ast.Call) -> bool:
    return any(
        k.arg == "copy" and isinstance(k.value, ast.Constant) and k.value.value is False
        for k in call.keywords
    )


# Exports through another module of the project (issue 34) -------------------------------

# Text a module holds where it may export: the rule's triggers.
_EXPORT_WORDS = ("dlpack", "unsafe_buffer_pointer", "__cuda_array_interface__")
# How many functions a parameter is followed through (a helper's helper in another module).
MAX_HANDOFFS = 6


# Text a module holds where it may place an array on several devices: every way the value
# analysis makes one (`values.SHARDING_TYPES`, `MULTI_PRODUCERS`, `SHARDED_BY_ARGUMENT`,
# `NOT_ADDRESSABLE_PRODUCERS`, `MULTI_TRANSFORMS`, `MESH_CONTEXTS`, jit's `out_shardings` and
# pjit's `out_axis_resources`) spells one of these or `pmap` or a mesh word below
# (`test_placement_words_cover_every_placement_the_analysis_knows`).
_PLACEMENT_WORDS = (
    "harding", "shard_map", "device_put", "make_array_from", "device_mesh", "global_array", "reshard", "axis_resources"
)
# `jax.set_mesh(mesh)`, `use_mesh`, `make_mesh`, not within a longer name (warp's geometry tests
# call `test_set_mesh_points`).
_MESH_WORDS = ("set_mesh", "use_mesh", "make_mesh")


def holds_export_text(text: str) -> bool:
    return any(word in text for word in _EXPORT_WORDS)


def holds_placement_text(text: str) -> bool:
    """Whether ``text`` spells a placement word outside a comment: the value analysis reads the
    code, and a comment that says `pmap` (warp's FFI module: "from multiple threads, like with
    pmap") made every file that imports the module ask it about every value it passes on."""
    return (
        any(word in text and _in_code(text, _occurrences(text, word)) for word in _PLACEMENT_WORDS)
        # `pmap` as a whole word, not `mipmap` (found with str.find: a regex that opens with `\b`
        # is tried at every position of the text, not searched).
        or ("pmap" in text and _in_code(text, whole_word_starts(text, "pmap")))
        or ("_mesh" in text and any(_in_code(text, word_starts(text, word)) for word in _MESH_WORDS))
    )


def _occurrences(text: str, word: str) -> Iterator[int]:
    at = text.find(word)
    while at != -1:
        yield at
        at = text.find(word, at + 1)


def _in_code(text: str, positions: Iterator[int]) -> bool:
    """Whether one of ``positions`` may lie in code: not after a `#` that surely opens a comment."""
    return any(not _in_comment(text, at) for at in positions)


def _in_comment(text: str, at: int) -> bool:
    """Whether position ``at`` surely lies in a comment, from its line alone: a `#` before it with
    no quote before that (else the `#` may be a string's), on a line without `{` (a line of a
    triple-quoted f-string is a string's, but its replacement fields are code). Text in a
    triple-quoted string may read as a comment here: it is no code either."""
    # A line ends at `\n`, `\r\n` or a lone `\r` (old Mac files), as Python reads it.
    start = max(text.rfind("\n", 0, at), text.rfind("\r", 0, at)) + 1
    hash_at = text.find("#", start, at)
    if hash_at < 0:
        return False
    ends = [end for end in (text.find("\n", at), text.find("\r", at)) if end >= 0]
    line = text[start : min(ends) if ends else len(text)]
    before = line[: hash_at - start]
    return "{" not in line and "'" not in before and '"' not in before


def may_place_several(text: str, project) -> bool:
    """From texts alone: whether a value of the file can be a multi-device array at all. The
    file places one itself, or imports a name that leads to text that does, through whatever
    that uses (the value analysis knows no other origin of one)."""
    return holds_placement_text(text) or (
        project is not None and project.reaches("placement-used", holds_placement_text, text)
    )


def may_export_across(text: str, project) -> bool:
    """From texts alone: the file can hand a multi-device array to another module's export. It
    places arrays itself, or imports a function or class whose own text does (a data module's
    `make_batch`); and it imports a name that leads to export text, through whatever that uses."""
    return (
        holds_placement_text(text) or project.reaches("placement", holds_placement_text, text, follow=False)
    ) and project.reaches("exports", holds_export_text, text)


def may_export_parameters_across(text: str, project) -> bool:
    """``may_export_across``, and a block the file's imports lead to (through whatever it uses)
    may hold an export of a parameter that its module does not guard (``holds_parameter_export``):
    the only place ``through_exports`` finds anything. EasyDeL's one module with export text
    guards its parameter (`x.devices()`): ~11 s of its 23 s cold run went to valuing every
    argument of every call of 500 files for an export no call can reach."""
    return may_export_across(text, project) and _may_reach_parameter_exports(text, project)


def _may_reach_parameter_exports(text: str, project) -> bool:
    """Whether a block the file's imports lead to may export a parameter. Asked of the file's
    imports (``project.reaches``) only in a root where no module exports one (EasyDeL): where
    some module does (warp, whose `unittest_suites.py` imports every test module: a search of
    most of the root, 0.14 s, for a check of 0.03 s), the answer is left to the check; both
    ways are exact, the question only spares the check."""
    return _root_exports_parameters(project) or project.reaches("parameter-exports", holds_parameter_export, text)


# Root -> whether some module of it exports a parameter (``_root_exports_parameters``).
_ROOTS_EXPORTING: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _root_exports_parameters(project) -> bool:
    """Whether some module of the root holds a parameter export (``holds_parameter_export``),
    kept for the run with the root: the modules named for DLPack first (warp's `_src/dlpack.py`
    answers for its 645 modules, whose texts cost 37 ms to read), then one look at the text of
    every module, those with export text parsed smallest first until one does. Whether to ask
    each file, not an answer to it."""
    root = project.root
    found = _ROOTS_EXPORTING.get(root)
    if found is None:
        paths = sorted(root.modules.paths)
        named = [path for path in paths if "dlpack" in path.rsplit("/", 1)[-1]]
        found = any(map(holds_parameter_export, map(project.text, named)))
        if not found:
            texts = [text for text in map(project.text, paths) if holds_export_text(text)]
            found = any(map(holds_parameter_export, sorted(texts, key=len)))
        _ROOTS_EXPORTING[root] = found
    return found


def through_exports(ctx: FileContext) -> Iterator[Export]:
    """Calls of this file that hand a value to a function of another module of the project
    that exports the parameter it arrives in: ``to_torch(batch)`` with ``def to_torch(x):
    return torch.from_dlpack(x)`` in ``pkg/interop.py``. The export is reported here, where the
    value is known; the callee's own file knows only a parameter."""
    project = ctx.project
    if project is None or not may_export_parameters_across(ctx.text, project):
        return
    analysis = ctx.analysis
    bindings = ctx._bindings
    # This file's own functions and classes: their calls stay here.
    own = {s.name for s in ctx.tree.body if isinstance(s, (*FUNCTIONS, ast.ClassDef))}
    for node in analysis.nodes:  # the tree's nodes, walked once for every reader
        if node.__class__ is not ast.Call or not _may_leave(node.func, bindings, project):
            continue
        if node.func.__class__ is ast.Attribute:
            yield from _field_exports(ctx, node)
        if not node.args and not node.keywords:
            continue
        if node.func.__class__ is ast.Name and not isinstance(bindings.get(node.func.id), str):
            # A name that is no import (`export = make_exporter()`): where it is defined first,
            # as most such calls run this file's functions.
            if node.func.id in own or _foreign_callee(analysis, node) is None:
                continue
        if isinstance(node.func, ast.Attribute) and ctx.qualname(node.func) is None:
            # A method: of an instance or class another module of the project defines.
            receiver = analysis.value_of(node.func.value)
            if receiver.kind not in (v.INSTANCE, v.CLASS) or receiver.owner in (None, ctx.root_path):
                continue
        # What is passed (most calls pass nothing sharded), then where it goes. An argument the
        # fix cannot wrap (`{"x": batch}`, `a if c else b`) is still reported, without a fix.
        sharded = [
            a for a in [*node.args, *(k.value for k in node.keywords)]
            if a.__class__ is not ast.Starred
            and _may_be_placed(a, bindings, project)
            and _may_hold_several(analysis, a)
        ]
        if not sharded:
            continue
        callee = _foreign_callee(analysis, node)
        if callee is None:
            continue
        owner, function, bound = callee
        for argument, parameter in v.call_arguments(node, function, bound):
            if not any(argument is a for a in sharded):
                continue
            found = parameter_export(owner.ctx, function, parameter)
            if found is None:
                continue
            inner, where = found
            # Exported as the callee maps it (`jax.tree.map(torch.from_dlpack, tree)`: each leaf).
            export = Export(argument, node, "", inner.pointer, inner.forbids_copy, inner.leaves, inner.elements, where)
            if not _placed_on_several(exported_value(ctx, export)):
                continue
            name = function.name
            cls = owner.ctx.parent(function)
            if isinstance(cls, ast.ClassDef):
                name = f"{cls.name}.{name}"
            yield replace(export, via=f"`{name}` (through {inner.via} in {where})")


def _foreign_callee(analysis, call: ast.Call):
    """``Analysis.foreign_callee``, and the `__call__` of an instance of another module's class
    called with the call's own arguments (`bridge(batch)`, `ToTorch()(batch)`)."""
    found = analysis.foreign_callee(call)
    if found is None:
        method = analysis.instance_call(call.func)
        if method is not None and method.analysis is not analysis:
            found = (method.analysis, method.function, True)
    return found


def _field_exports(ctx: FileContext, call: ast.Call) -> Iterator[Export]:
    """``Exporter(batch).export()``: a method of another module's class that exports one of
    its instance's fields (``torch.from_dlpack(self.arr)``), called on an instance this file
    built with a multi-device array in that field. Reported at the call, where the value is
    known; the method's own file sees only ``self``."""
    analysis = ctx.analysis
    if ctx.qualname(call.func) is not None:
        return
    receiver = analysis.value_of(call.func.value)
    if receiver.kind != v.INSTANCE or receiver.owner in (None, ctx.root_path):
        return
    callee = analysis.foreign_callee(call)
    if callee is None or not callee[2]:
        return
    owner, function, _bound = callee
    positional = [*function.args.posonlyargs, *function.args.args]
    if not positional:
        return
    this = positional[0]
    for export in _module_exports(owner.ctx):
        value = export.value
        if (
            export.leaves
            or export.elements
            or not (function.lineno <= export.site.lineno <= function.end_lineno)
            or not isinstance(value, ast.Attribute)
            or owner.parameter_source(value.value) is not this
            or is_guarded(owner.ctx, export)
        ):
            continue
        held = v.join([receiver.element(value.attr), *analysis.stored_fields(call.func.value, value.attr)])
        if not _placed_on_several(held):
            continue
        cls = owner.ctx.parent(function)
        name = f"{cls.name}.{function.name}" if isinstance(cls, ast.ClassDef) else function.name
        where = f"`{owner.ctx.root_path or owner.ctx.path}` line {export.site.lineno}"
        yield Export(
            call.func.value, call, f"`{name}` (through {export.via} of `self.{value.attr}` in {where})",
            export.pointer, export.forbids_copy, through=where, field=value.attr, held=held,
        )


_SEVERAL = frozenset({v.MULTI, v.NOT_ADDRESSABLE})


def _placed_on_several(value: v.Value) -> bool:
    return value.kind == v.ARRAY and value.placement in _SEVERAL


def _may_hold_several(analysis, argument: ast.expr) -> bool:
    """An argument that is, or holds as a leaf or an element, a multi-device array: what a
    callee exports of it (the argument, its leaves, its elements) is asked once it is known."""
    return any(_placed_on_several(leaf) for leaf in analysis.leaf_values(analysis.value_of(argument)))


def _may_be_placed(argument: ast.AST, bindings: dict, project) -> bool:
    """A name imported from the project (or an attribute of one, `wp.float32`) can hold a
    multi-device array only where its own text places one (a module constant made with a
    `NamedSharding`): asked of the text before the module is parsed. Anything else may."""
    chain = []
    while isinstance(argument, ast.Attribute):
        chain.append(argument.attr)
        argument = argument.value
    target = bindings.get(argument.id) if isinstance(argument, ast.Name) else None
    if not isinstance(target, str) or project.module_of(target) is None:
        return True
    return project.name_reaches("placement", holds_placement_text, ".".join([target, *reversed(chain)]), follow=False)


def _may_leave(func: ast.AST, bindings: dict, project) -> bool:
    """Whether a call of ``func`` may run a function of another module of the project that
    leads to export text: a name imported from it (or an attribute of one, `interop.to_numpy`)
    whose text does (``View.name_reaches``), or a name or method of a value that is no import
    (an instance, a function another module's factory returned: the value analysis says where
    it is defined); not a library's (`np.asarray`)."""
    chain = []
    if isinstance(func, ast.Call):
        func = func.func  # `ToTorch()(batch)`: the `__call__` of what the class's module defines
    while isinstance(func, ast.Attribute):
        chain.append(func.attr)
        func = func.value
        if not isinstance(func, (ast.Attribute, ast.Name)):
            return True  # `Exporter(...).export`, `batches[0].to_torch`
    if not isinstance(func, ast.Name):
        return False
    target = bindings.get(func.id)
    if not isinstance(target, str):
        # Not an import: `exporter.export(...)` (a value's method), `export(x)` with `export =
        # make_exporter()` (a name maybe bound to another module's function): the values decide.
        return True
    qualified = ".".join([target, *reversed(chain)])
    return project.name_reaches("exports", holds_export_text, qualified)


def parameter_export(ctx: FileContext, function: ast.AST, parameter: ast.arg, depth: int = 0) -> tuple[Export, str] | None:
    """An unguarded export, in ``function`` of ``ctx``'s module, of what ``parameter`` holds,
    and where it is (`` `pkg/interop.py` line 6``): the parameter exported as it arrived, or
    handed on to a function of this module or of another module of the project that exports
    it."""
    memo = ctx.__dict__.setdefault("_parameter_exports", {})
    key = (function, parameter.arg)
    if key in memo:
        return memo[key]
    memo[key] = None  # a recursion answers no
    found = None
    if depth < MAX_HANDOFFS:
        found = _exported_here(ctx, function, parameter) or _handed_on(ctx, function, parameter, depth)
    memo[key] = found
    return found


def _module_exports(ctx: FileContext) -> list[Export]:
    """Every export of another module's context, found once (asked for each call into it)."""
    exports = ctx.__dict__.get("_all_exports")
    if exports is None:
        exports = ctx.__dict__["_all_exports"] = list(find_exports(ctx)) if holds_export_text(ctx.text) else []
    return exports


def _exported_here(ctx: FileContext, function: ast.AST, parameter: ast.arg) -> tuple[Export, str] | None:
    exports = _module_exports(ctx)
    analysis = ctx.analysis
    for export in exports:
        if not (function.lineno <= export.site.lineno <= function.end_lineno):
            continue
        if analysis.parameter_source(export.value) is parameter and not is_guarded(ctx, export):
            return export, f"`{ctx.root_path or ctx.path}` line {export.site.lineno}"
    return None


def _handed_on(ctx: FileContext, function: ast.AST, parameter: ast.arg, depth: int) -> tuple[Export, str] | None:
    analysis = ctx.analysis
    for node in scope_nodes(function):
        if node.__class__ is not ast.Call:
            continue
        passed = [a for a in [*node.args, *(k.value for k in node.keywords)] if a.__class__ is ast.Name]
        if not any(analysis.parameter_source(a) is parameter for a in passed):
            continue
        callee = analysis.foreign_callee(node)
        if callee is not None:
            owner, target, bound = callee
            module = owner.ctx
        else:
            value = analysis.value_of(node.func)
            if value.kind != v.FUNCTION or value.node is None or not isinstance(value.node, FUNCTIONS):
                continue
            module, target, bound = ctx, value.node, isinstance(node.func, ast.Attribute)
        for argument, inner in v.call_arguments(node, target, bound):
            if analysis.parameter_source(argument) is parameter:
                found = parameter_export(module, target, inner, depth + 1)
                if found is not None:
                    return found
    return None


# What is exported ------------------------------------------------------------------------


def exported_value(ctx: FileContext, export: Export) -> v.Value:
    """What ``export`` hands over: the value, or for a consumer mapped over its leaves or
    elements, one that spans several devices where any does (the map raises at that one), else
    them all joined."""
    analysis = ctx.analysis
    if export.leaves or export.elements:
        whole = analysis.value_of(export.value)
        parts = analysis.leaf_values(whole) if export.leaves else [v for _, v in whole.items] if whole.kind == v.CONTAINER else []
        several = next((part for part in parts if _placed_on_several(part)), None)
        if several is not None:
            return several
        return analysis.leaves(export.value) if export.leaves else analysis.iterated(export.value)
    return analysis.value_of(export.value)


def _is_builtin_map(ctx: FileContext, func: ast.AST) -> bool:
    return isinstance(func, ast.Name) and func.id == "map" and not ctx.is_bound("map")


def is_guarded(ctx: FileContext, export: Export) -> bool:
    """The code already handles a multi-device value here: a check of its devices around the
    export, a handler of the error it raises, or an inspection of the value in its scope."""
    scope = _guard_scope(ctx, export)
    exceptions = GUARD_EXCEPTIONS["pointer" if export.pointer else "dlpack"]
    if caught(ctx, export.site, exceptions, stop=scope) or callers_catch(ctx, export.site, exceptions):
        return True
    return _guarded_in_scope(ctx, export, scope)


def _guarded_here(ctx: FileContext, export: Export) -> bool:
    """``is_guarded``'s tests of the module's own code that read no name's meaning: a check of
    the devices around the export, an inspection of the value in its scope. A yes here is a yes
    there, whatever the project (not ``caught``: which error a handler names is read through the
    imports, a star import's among them; nor ``callers_catch``, whose callers may be anywhere)."""
    return _guarded_in_scope(ctx, export, _guard_scope(ctx, export))


def _guard_scope(ctx: FileContext, export: Export) -> ast.AST:
    scopes = ctx.analysis.scopes
    scope = scopes.scope_of(export.site)
    while isinstance(scope, COMPREHENSIONS):
        scope = scopes.scope_of(scope)
    return scope


def _guarded_in_scope(ctx: FileContext, export: Export, scope: ast.AST) -> bool:
    for ancestor in ctx.ancestors(export.site):
        if ancestor is scope:
            break
        if isinstance(ancestor, (ast.If, ast.IfExp, ast.While, ast.Assert)) and _mentions_guard(
            ancestor.test
        ):
            return True
    if isinstance(export.value, ast.Name):
        return _value_inspected(export.value.id, scope)
    return False


def _value_inspected(name: str, scope: ast.AST) -> bool:
    """The scope looks at the value's devices (``x.sharding``, ``x.is_fully_replicated``...),
    and not only to show them: a bare expression statement (a notebook's display line
    `labels.sharding`) or a `print(...)` of one decides nothing (issue 54)."""
    nodes = list(scope_nodes(scope))
    shown = {id(node.value) for node in nodes if isinstance(node, ast.Expr)}
    shown.update(
        id(argument)
        for node in nodes
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print"
        for argument in node.args
    )
    return any(
        isinstance(node, ast.Attribute)
        and node.attr in GUARD_ATTRIBUTES
        and isinstance(node.value, ast.Name)
        and node.value.id == name
        and id(node) not in shown
        for node in nodes
    )


def _mentions_guard(test: ast.AST) -> bool:
    return any(isinstance(node, ast.Attribute) and node.attr in GUARD_ATTRIBUTES for node in ast.walk(test))


# Which modules export a parameter (``through_exports``' only source) ----------------------


class ParameterExports:
    """``project.reaches``' predicate: a module's text (or a block of it, ``in_block``) holds an
    export that ``through_exports`` can reach from another module: one whose value, or the
    object of whose value (``self.arr``), is a parameter as its function received it
    (``parameter_source``), and that the module does not guard (``_guarded_here``; whether the
    callers catch is left to the check). Read from the tree the value analysis reads of the
    module (the same parse of the same text: none for a module too long or unparsable, as
    ``analysis.project`` gives none), over every node an export can be (``find_exports``' and
    more: any argument of a call on an export line, not only a consumer's): a superset of what
    ``parameter_export`` and ``_field_exports`` accept, from the module alone."""

    def __init__(self) -> None:
        self._lines: dict[str, tuple[int, ...]] = {}  # text -> the lines of those exports

    def __call__(self, text: str) -> bool:
        return bool(self.lines(text))

    def in_block(self, text: str, start: int, end: int) -> bool:
        lines = self.lines(text)
        if not lines:
            return False
        first = 1 + FileContext.count_line_breaks(text, 0, start)
        last = first + FileContext.count_line_breaks(text, start, end)
        return any(first <= line <= last for line in lines)

    def lines(self, text: str) -> tuple[int, ...]:
        if not holds_export_text(text):
            return ()  # (``_module_exports`` reads none of such a module; nothing kept of it)
        found = self._lines.get(text)
        if found is None:
            if len(self._lines) >= 64:
                self._lines.clear()
            found = self._lines[text] = _parameter_export_lines(text)
        return found


def _parameter_export_lines(text: str) -> tuple[int, ...]:
    if len(text) > MAX_PARSED_CHARS:
        return ()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ()  # (``analysis.project`` reads no tree of it either)
    ctx = FileContext("<module>", text, tree)
    lines = _export_lines(text)
    source = ctx.analysis.parameter_source
    found = []
    for export in _export_candidates(tree, lines):
        value = export.value
        if (
            source(value) is not None or (isinstance(value, ast.Attribute) and source(value.value) is not None)
        ) and not _guarded_here(ctx, export):
            found.append(export.site.lineno)
    return tuple(sorted(set(found)))


def _export_candidates(tree: ast.Module, lines: list[int]) -> Iterator[Export]:
    """Every export ``find_exports`` can find in ``tree`` (whatever its names resolve to), as
    far as ``is_guarded`` and ``parameter_source`` read one: its value, site and pointer."""
    for node in _nodes_near(tree, lines) if lines else ():
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in DLPACK_METHODS | POINTER_METHODS:
                yield Export(func.value, node, "", func.attr in POINTER_METHODS, False)
            # A consumer's argument, a map's tree, what a higher-order call runs the consumer with.
            for argument in [*node.args, *(k.value for k in node.keywords)]:
                if not isinstance(argument, ast.Starred):
                    yield Export(argument, node, "", False, False)
        elif isinstance(node, ast.Attribute) and node.attr in POINTER_ATTRIBUTES and isinstance(node.ctx, ast.Load):
            yield Export(node.value, node, "", True, False)


holds_parameter_export = ParameterExports()


def _exports_nothing_here(source: bytes, text: str) -> bool:
    """Whether ``find_exports`` finds nothing in the file: no line of ``text`` may export
    (``_export_lines``), read where ``text`` is what the check reads (ASCII bytes, no coding
    declaration: ``source_text`` and the engine's decoding agree)."""
    return source.isascii() and b"coding" not in source and not _export_lines(text)


# The rules ---------------------------------------------------------------------------------

_COMPOUND = (
    ast.If,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.Try,
    TRY_STAR,
    ast.With,
    ast.AsyncWith,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Match,
)


class GatherBeforeExport(Rule):
    """Finds exports of JAX arrays placed as ``PLACEMENTS`` say and gathers them with
    ``ensure_single_device``."""

    PLACEMENTS: frozenset[str]
    WRAP_SAFETY: FixSafety
    # `torch.as_tensor(x)`, `torch.tensor(x)` read a JAX array through DLPack: spelled with
    # `torch.` (a bare `tensor(` is in JAX's own MLIR code, 11 files of the jax tree parsed for
    # nothing: +3.8% of its work count).
    TRIGGERS = (b"dlpack", b"unsafe_buffer_pointer", b"__cuda_array_interface__", b"torch.as_tensor", b"torch.tensor(")
    # Only a JAX array is reported, and the value analysis knows one only from a name that
    # resolves into jax (`jax.numpy...`, `jax.Array`, `jaxtyping`) or into a module of the
    # file's project that hands one over (`from pipeline.data import make_batch`): a file must
    # import one or the other. The prefilter is the default one: every REQUIRES and one of the
    # TRIGGERS.
    REQUIRES = (b"import",)

    def describe(self, source: str, value: v.Value, export: Export) -> str:
        raise NotImplementedError

    # Exports in a function of another module of the project that this file calls with the
    # value (``through_exports``): reported at the call. JAX006 leaves them to the callee's file,
    # where the export itself is.
    PROJECT_PREFILTER = True

    def project_prefilter(self, source: bytes, project) -> bool:
        text = source_text(source)
        if may_export_across(text, project) and (
            not _exports_nothing_here(source, text) or _may_reach_parameter_exports(text, project)
        ):
            # The file's own exports (``find_exports``), or another module's of a parameter
            # (``through_exports``): nothing else is checked of a file the gate passes.
            return True
        # A rule that requires `jax` (JAX002): the file exports, names no jax, so knows a JAX
        # array only from another module of its project, whose text (or one it uses, and so
        # on) must then place one on several devices.
        return (
            self.REQUIRES == (b"jax",)
            and any(trigger in source for trigger in self.TRIGGERS)
            and may_place_several(text, project)
        )

    def project_needs(self) -> tuple[bytes, ...]:
        """Words the file or some module of its root must hold for ``project_prefilter`` to pass:
        it passes only a file that reaches export text (``may_export_across``: a module holds one
        of ``_EXPORT_WORDS``) or holds a trigger itself. The engine asks nothing of the files of
        a root that holds none (issue 55: black, libcst, most roots without JAX interop)."""
        return tuple(dict.fromkeys((*(word.encode() for word in _EXPORT_WORDS), *self.TRIGGERS)))

    def check(self, ctx: FileContext) -> list[Finding]:
        if self.PLACEMENTS <= _SEVERAL and not may_place_several(ctx.text, ctx.project):
            # No value of the file can span several devices: nothing to parse for (most files
            # that export, a library's own interop module, place nothing).
            return []
        findings = []
        exports = find_exports(ctx)
        if self.PROJECT_PREFILTER and ctx.project is not None:
            exports = [*exports, *through_exports(ctx)]
        for export in exports:
            value = export.held if export.held is not None else exported_value(ctx, export)
            if value.kind != v.ARRAY or value.placement not in self.PLACEMENTS or is_guarded(ctx, export):
                continue
            findings.append(self._finding(ctx, export, value))
        return findings

    def _finding(self, ctx: FileContext, export: Export, value: v.Value) -> Finding:
        source = ctx.source_of(export.value)
        if export.field is not None:
            # The array sits in an object the method reads it from: nothing here to wrap.
            message = self.describe(f"{source}.{export.field}", value, export)
            advice = (
                f"gather it before it is stored in the object (`{HELPER}(...)` where `.{export.field}` is "
                f"set), or in the method; no automatic fix: the method reads it from `self.{export.field}`"
            )
            return self._report(ctx, export, f"{message}; {advice}")
        if value.placement == v.NOT_ADDRESSABLE:
            outcome = (
                "works only while this process holds exactly one shard of it"
                if export.pointer
                else f"raises {export.error}"
            )
            advice = (
                "no one process can gather it onto one device, so there is no automatic fix: "
                "export its local shards (`.addressable_data(i)`) or gather it on the host "
                "(`jax.experimental.multihost_utils.process_allgather`)"
            )
            message = f"`{source}` spans several processes (from {value.why}): {export.via} {outcome}"
            return self._report(ctx, export, f"{message}; {advice}")
        message = self.describe(source, value, export)
        by_hand = f"gather it first with `jax.device_put({source}, jax.devices()[0])`"
        conflict = _helper_conflict(ctx, export)
        if conflict:
            return self._report(ctx, export, f"{message}; {by_hand} (no automatic fix: {conflict})")
        if export.forbids_copy:
            reason = "a gather is a copy, which `copy=False` forbids"
            return self._report(ctx, export, f"{message}; {by_hand} and drop `copy=False` ({reason})")
        if export.through is not None:
            return self._through_finding(ctx, export, message, by_hand)
        if export.pointer:
            return self._pointer_finding(ctx, export, message)
        node_type = WRAPPABLE.get(type(export.value).__name__)
        if node_type is None:
            return self._report(ctx, export, f"{message}; {by_hand} (no automatic fix for this expression)")
        if export.leaves or export.elements:
            fix = f"gather every {'leaf' if export.leaves else 'element'} first: `{ctx.source_of(export.site.func)}({HELPER}, {source})`"
            data = (WRAP_LEAVES, ctx.source_of(export.site.func))
            return self.finding(
                ctx, export.value, f"{message}; {fix}", self.WRAP_SAFETY, node_type, data, (export.error,)
            )
        fix = f"gather it first: `{HELPER}({source})`"
        return self.finding(
            ctx, export.value, f"{message}; {fix}", self.WRAP_SAFETY, node_type, (WRAP,), (export.error,)
        )

    def _through_finding(self, ctx: FileContext, export: Export, message: str, by_hand: str) -> Finding:
        """An export in a function of another module that this call hands the value to: gather
        the argument. Unsafe: the whole function then sees a single-device array (the same
        values; its other uses of it, and what it returns, are no longer sharded)."""
        source = ctx.source_of(export.value)
        node_type = WRAPPABLE.get(type(export.value).__name__)
        if export.pointer:
            advice = "gather it by hand into a variable that outlives the pointer, and pass that"
            return self._report(ctx, export, f"{message}; {advice}")
        if export.leaves or export.elements:
            what = "leaf" if export.leaves else "element"
            advice = f"gather every {what} before the call (`jax.tree.map({HELPER}, {source})`)"
            return self._report(ctx, export, f"{message}; {advice}; no automatic fix: the callee maps the export over it")
        if node_type is None:
            return self._report(ctx, export, f"{message}; {by_hand} (no automatic fix for this expression)")
        fix = f"gather it before the call: `{HELPER}({source})`"
        return self.finding(ctx, export.value, f"{message}; {fix}", FixSafety.UNSAFE, node_type, (WRAP,), (export.error,))

    def _report(self, ctx: FileContext, export: Export, message: str) -> Finding:
        return self.finding(ctx, export.site, message, FixSafety.NONE, raises=(export.error,))

    def _pointer_finding(self, ctx: FileContext, export: Export, message: str) -> Finding:
        statement = ctx.enclosing_statement(export.site)
        value = export.value
        reason = _why_not_rebindable(ctx, statement, value)
        if reason is None:
            fix = f"gather it into the variable first, `{value.id} = {HELPER}({value.id})`, and keep it alive"
            return self.finding(
                ctx,
                statement,
                f"{message}; {fix} while the pointer is used",
                FixSafety.UNSAFE,
                "SimpleStatementLine",
                (REBIND, value.id),
                (export.error,),
            )
        advice = f"gather it by hand into a variable that outlives the pointer ({reason})"
        return self.finding(ctx, export.site, f"{message}; {advice}", FixSafety.NONE, raises=(export.error,))

    def rewrite(self, original, updated, finding: Finding, fixer: Fixer):
        import libcst as cst

        self._provide_helper(fixer)
        if finding.data[0] == WRAP_LEAVES:
            inner = updated.with_changes(lpar=[], rpar=[])
            return cst.Call(
                func=cst.parse_expression(finding.data[1]),
                args=[
                    cst.Arg(cst.Name(HELPER), comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                    cst.Arg(inner),
                ],
                lpar=updated.lpar,
                rpar=updated.rpar,
            )
        if finding.data[0] == WRAP:
            inner = updated.with_changes(lpar=[], rpar=[])
            return cst.Call(
                func=cst.Name(HELPER), args=[cst.Arg(inner)], lpar=updated.lpar, rpar=updated.rpar
            )
        name = finding.data[1]
        gather = cst.parse_statement(f"{name} = {HELPER}({name})\n").with_changes(
            leading_lines=updated.leading_lines
        )
        return cst.FlattenSentinel([gather, updated.with_changes(leading_lines=[])])

    def _provide_helper(self, fixer: Fixer) -> None:
        if _module_helper(fixer.ctx.tree) is not None:
            return
        module = self.options.get(HELPER_MODULE_OPTION)
        if module:
            fixer.add_import(module, HELPER)
        else:
            fixer.state[HELPER] = True

    def finalize(self, module: cst.Module, fixer: Fixer) -> cst.Module:
        import libcst as cst

        if not fixer.state.get(HELPER) or any(
            isinstance(statement, cst.FunctionDef) and statement.name.value == HELPER
            for statement in module.body
        ):
            return module
        return insert_after_preamble(module, HELPER_SOURCE)


def _module_helper(tree: ast.Module) -> ast.AST | None:
    """The module-level definition or import of the helper, if the file has one."""
    for statement in tree.body:
        if (
            isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and statement.name == HELPER
        ):
            return statement
        if isinstance(statement, ast.ImportFrom) and any(
            (alias.asname or alias.name) == HELPER for alias in statement.names
        ):
            return statement
        targets = getattr(statement, "targets", None) or [getattr(statement, "target", None)]
        if isinstance(statement, (ast.Assign, ast.AnnAssign)) and any(
            name.id == HELPER for target in targets if target for name, _ in bound_names(target)
        ):
            return statement
    return None


def _helper_conflict(ctx: FileContext, export: Export) -> str | None:
    """Why ``ensure_single_device`` cannot be used at ``export``, if it cannot."""
    scopes = ctx.analysis.scopes
    if HELPER not in ctx.text:
        return None
    existing = _module_helper(ctx.tree)
    if existing is not None:
        if isinstance(existing, ast.ImportFrom):
            if any(alias.name != HELPER for alias in existing.names if alias.asname == HELPER):
                return f"`{HELPER}` is imported under that name from something else"
        elif not (
            isinstance(existing, ast.FunctionDef) and (existing.args.posonlyargs or existing.args.args)
        ):
            return f"the module defines a different `{HELPER}`"
        elif scopes.scope_of(export.site) is ctx.tree and existing.lineno > export.site.lineno:
            return f"the module defines `{HELPER}` only after this line"
    scope = scopes.scope_of(export.site)
    if scope is not ctx.tree and HELPER in scopes.definitions(scope):
        return f"`{HELPER}` is a local name here"
    if isinstance(scope, FUNCTIONS):
        arguments = scope.args
        every = (
            *arguments.posonlyargs,
            *arguments.args,
            *arguments.kwonlyargs,
            arguments.vararg,
            arguments.kwarg,
        )
        if any(argument is not None and argument.arg == HELPER for argument in every):
            return f"`{HELPER}` is a parameter here"
    return None


def _why_not_rebindable(ctx: FileContext, statement: ast.stmt | None, value: ast.expr) -> str | None:
    """Why ``value = ensure_single_device(value)`` cannot go on its own line before ``statement``."""
    if not isinstance(value, ast.Name):
        return "the pointer is taken from an expression, whose gathered copy would be freed at once"
    if isinstance(statement, ast.Return):
        return "the pointer is returned, and a local gathered copy is freed when the function returns"
    if statement is None or isinstance(statement, _COMPOUND):
        return "the export sits in a compound statement's header"
    if any(isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await)) for node in ast.walk(statement)):
        return "the statement suspends, so the pointer may outlive the gathered copy"
    targets = getattr(statement, "targets", None) or [getattr(statement, "target", None)]
    if any(name.id == value.id for target in targets if target for name, _ in bound_names(target)):
        return f"the statement rebinds `{value.id}`, which would drop the gathered copy"
    scopes = ctx.analysis.scopes
    scope = scopes.scope_of(value)
    if scopes.scope_of(statement) is not scope:
        return "the export runs in a lambda or comprehension"
    if scope is not ctx.tree and not (
        scopes.parameter(value.id, scope) or value.id in scopes.definitions(scope)
    ):
        return f"rebinding `{value.id}` here would make the outer name local to the function"
    if not alone_on_its_lines(ctx, statement):
        return "the statement shares its line with another"
    return None
