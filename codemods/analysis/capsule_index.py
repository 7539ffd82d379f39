"""One walk of a file for the capsule analysis: its calls, bindings, reads of names and
attributes by spelling, and ``from ... import`` statements; and which calls may be DLPack calls
at all (their callee's name may hold a DLPack function, ``_dlpack_names``), so only those are
resolved through the value analysis."""

from __future__ import annotations

import ast
import bisect
from functools import cached_property

from jax_codemod.analysis.context import FileContext
from jax_codemod.analysis.values import Analysis

# The DLPack functions by name: every producer and consumer call ends in one of them, or goes
# through a name bound from one (see CapsuleAnalysis._dlpack_names).
_DLPACK_FUNCTIONS = frozenset({"to_dlpack", "from_dlpack", "__dlpack__", "toDlpack", "fromDlpack"})



class DlpackIndex:
    def __init__(self, ctx: FileContext, values: Analysis) -> None:
        self.ctx = ctx
        self.values = values

    @property
    def calls(self) -> list[ast.Call]:
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
    def candidate_calls(self) -> list[ast.Call]:
        return [call for call in self.calls if self._may_be_dlpack_call(call)]



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

