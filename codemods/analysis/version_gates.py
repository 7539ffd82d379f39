"""Version gates: code that runs an old JAX API only where that API exists.

Real code that supports several JAX releases keeps the old call behind a check::

    if version.parse(jax.__version__) < version.parse("0.7"):   # or jax.__version_info__
        capsule = jax.dlpack.to_dlpack(x)
    if hasattr(jax.dlpack, "to_dlpack"): ...
    to_dlpack = getattr(jax.dlpack, "to_dlpack", None)
    try:
        from jax.dlpack import to_dlpack
    except ImportError:
        to_dlpack = None

Such a call is not a bug. ``Gates.side(node)`` says on which side of a gate ``node``
sits: ``OLD`` (only runs where the old API exists), ``NEW`` (runs on current JAX), or
None (not gated). A gate whose direction cannot be read (``if USE_LEGACY:``) counts both
of its branches as gated.

A version string compared as a string (``jax.__version__ >= "0.7"``) is read by
``string_compared_versions``; ``may_compare_as_strings`` shows from a file's text and the few
top-level blocks that spell a version that it has none, without parsing the whole file.
"""

from __future__ import annotations

import ast
import bisect
import operator
import re
import unicodedata
from dataclasses import dataclass
from functools import cache, cached_property

from jax_codemod.analysis import jax_versions
from jax_codemod.analysis.blocks import Block, class_members, in_code, string_interiors, top_level_blocks
from jax_codemod.analysis.context import LIBRARY_STARS, FileContext, statements_holding
from jax_codemod.analysis.guards import handler_catches
from jax_codemod.analysis.partial import parse_quietly
from jax_codemod.analysis.scopes import BODY_FIELDS, child_fields, walk_values
from jax_codemod.analysis.values import CAPSULE_PRODUCERS
from jax_codemod.analysis.words import occurrences

OLD = "old"
NEW = "new"
BOTH = "both"  # a gate whose direction we cannot read: either branch may be the old one

_VERSION_ATTRIBUTES = ("__version__", "__version_info__", "version_info")
_BROAD = frozenset({"Exception", "BaseException"})
# What a removed function's lookup raises (AttributeError), or importing it in the same `try`.
_REMOVAL_ERRORS = frozenset({"AttributeError", "ImportError", "ModuleNotFoundError"})
_GUARDING_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "AttributeError", "TypeError"}) | _BROAD


# Version strings, by qualified name -> the distribution they are the version of.
VERSION_STRINGS = {
    "jax.__version__": "jax",
    "jax.version.__version__": "jax",
    "jaxlib.__version__": "jaxlib",
    "jaxlib.version.__version__": "jaxlib",
    "jax.lib.__version__": "jaxlib",
}
_ORDERING = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)
_OPERATORS = {
    ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
    ast.Eq: operator.eq, ast.NotEq: operator.ne,
}
WHOLE, SLICE, SPLIT_INDEX, SPLIT_SLICE, SPLIT = "whole", "slice", "split-index", "split-slice", "split"


@dataclass(frozen=True)
class StringVersionCompare:
    """One comparison of a JAX version string made as strings, not as versions.

    ``version`` is the version string's own expression (``jax.__version__``), ``form`` how the
    compared side is taken from it (the whole string, ``[:k]``, ``.split(".")[i]``,
    ``.split(".")[:k]``, ``.split(".")``) with ``index`` its ``k`` or ``i``; ``other`` the
    literal on the other side, ``version_left`` whether the version side is the left one.
    """

    compare: ast.Compare
    position: int  # which of the compare's operators
    version: ast.AST
    library: str
    form: str
    index: int | None
    op: ast.cmpop
    other: ast.AST
    version_left: bool

    def on(self, version: str) -> bool:
        """What the comparison gives, as Python computes it, where the version string is ``version``."""
        side: object = version
        if self.form == SLICE:
            side = version[: self.index]
        elif self.form in (SPLIT_INDEX, SPLIT_SLICE, SPLIT):
            parts = version.split(".")
            side = parts if self.form == SPLIT else parts[: self.index] if self.form == SPLIT_SLICE else (
                parts[self.index] if -len(parts) <= self.index < len(parts) else None
            )
        other = ast.literal_eval(self.other)
        if side is None:
            raise IndexError("the version string has no such part")
        if isinstance(other, tuple) and isinstance(side, list):
            other = list(other)  # a list never compares with a tuple; `[...] >= (...)` raises
        left, right = (side, other) if self.version_left else (other, side)
        return _OPERATORS[type(self.op)](left, right)


def string_compared_versions(qualname, compare: ast.Compare) -> list[StringVersionCompare]:
    """The parts of ``compare`` that compare a JAX version string as a string: ordered against a
    string (``jax.__version__ >= "0.7"``: "0.10.2" >= "0.7" is False), sliced
    (``jax.__version__[:3] == "0.4"``: "0.10.2"[:3] is "0.1"), or split and compared as strings
    (``jax.__version__.split(".")[1] >= "7"``: "10" >= "7" is False)."""
    found = []
    operands = [compare.left, *compare.comparators]
    for position, op in enumerate(compare.ops):
        left, right = operands[position], operands[position + 1]
        for version_side, other, version_left in ((left, right, True), (right, left, False)):
            taken = _version_side(qualname, version_side)
            if taken is None:
                continue
            version, library, form, index = taken
            if not _literal_for(form, other) or not _wrong_as_strings(form, op):
                continue
            found.append(StringVersionCompare(compare, position, version, library, form, index, op, other, version_left))
            break
    return found


def _version_side(qualname, node: ast.AST):
    """(version node, library, form, index) when ``node`` is taken from a version string."""
    library = _version_string(qualname, node)
    if library is not None:
        return node, library, WHOLE, None
    if isinstance(node, ast.Subscript):
        end = _slice_end(node.slice)
        library = _version_string(qualname, node.value)
        if library is not None and end is not None:
            return node.value, library, SLICE, end
        split = _split_of(qualname, node.value)
        if split is not None:
            if end is not None:
                return split[0], split[1], SPLIT_SLICE, end
            if isinstance(node.slice, ast.Constant) and type(node.slice.value) is int:
                return split[0], split[1], SPLIT_INDEX, node.slice.value
        return None
    split = _split_of(qualname, node)
    if split is not None:
        return split[0], split[1], SPLIT, None
    return None


def _version_string(qualname, node: ast.AST) -> str | None:
    if not isinstance(node, (ast.Name, ast.Attribute)):
        return None
    return VERSION_STRINGS.get(qualname(node))


def _split_of(qualname, node: ast.AST):
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "split"
        and len(node.args) == 1
        and not node.keywords
        and isinstance(node.args[0], ast.Constant)
        and node.args[0].value == "."
    ):
        library = _version_string(qualname, node.func.value)
        if library is not None:
            return node.func.value, library
    return None


def _slice_end(node: ast.AST) -> int | None:
    if isinstance(node, ast.Slice) and node.lower is None and node.step is None:
        upper = node.upper
        if isinstance(upper, ast.Constant) and type(upper.value) is int and upper.value > 0:
            return upper.value
    return None


def _literal_for(form: str, other: ast.AST) -> bool:
    if form in (WHOLE, SLICE, SPLIT_INDEX):
        return isinstance(other, ast.Constant) and isinstance(other.value, str)
    return isinstance(other, (ast.List, ast.Tuple)) and all(
        isinstance(e, ast.Constant) and isinstance(e.value, str) for e in other.elts
    )


def _wrong_as_strings(form: str, op: ast.cmpop) -> bool:
    """Whether ``op`` gives a wrong answer on some release: any ordering, and a prefix slice's
    equality too ("0.10.2"[:3] == "0.1"); a whole string's or a part's equality is exact."""
    if isinstance(op, _ORDERING):
        return True
    return form == SLICE and isinstance(op, (ast.Eq, ast.NotEq))


class Gates:
    def __init__(
        self, ctx: FileContext, qualname, old_names: frozenset[str],
        target: jax_versions.Version | jax_versions.Range | None = None
    ) -> None:
        """``old_names``: the qualified names of the old API (``jax.dlpack.to_dlpack``);
        ``target``: the JAX the code will run on, against which a comparison of version strings
        is computed as Python does (``jax.__version__ < "0.7"`` is True on "0.10.2")."""
        self.ctx = ctx
        self.qualname = qualname
        self.old_names = old_names
        self.target = target

    # Which way a test points ---------------------------------------------------------

    def old_when(self, test: ast.AST, depth: int = 0) -> bool | str | None:
        """True: the test holds where the old API exists; False: where it does not;
        BOTH: it is a version test of unknown direction; None: not a version test."""
        if depth > 5:
            return None
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self.old_when(test.operand, depth + 1)
            return (not inner) if isinstance(inner, bool) else inner
        if isinstance(test, ast.BoolOp):
            directions = {self.old_when(value, depth + 1) for value in test.values} - {None}
            if not directions:
                return None
            return directions.pop() if len(directions) == 1 else BOTH
        if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "hasattr":
            if len(test.args) == 2 and self._names_old_api(test.args[0], test.args[1]):
                return True
            return None
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            left, op, right = test.left, test.ops[0], test.comparators[0]
            if isinstance(op, (ast.Is, ast.IsNot)) and _is_none(right):
                if self._is_optional_old_api(left, depth):
                    return isinstance(op, ast.IsNot)
                return None
            as_strings = string_compared_versions(self.qualname, test) if self.target is not None else []
            if as_strings:
                try:
                    # Computed as Python does on each release of the target where the old API is
                    # gone: holding on all of them, its body runs there (the new side). Holding on
                    # some only, both sides run where the old API is gone: it gates nothing.
                    results = {as_strings[0].on(jax_versions.render(v)) for v in self._releases()}
                except (IndexError, TypeError, ValueError):
                    return BOTH
                return (not results.pop()) if len(results) == 1 else None
            left_version, right_version = self.is_version(left, depth), self.is_version(right, depth)
            if left_version or right_version:
                if isinstance(op, (ast.Lt, ast.LtE)):
                    return bool(left_version)
                if isinstance(op, (ast.Gt, ast.GtE)):
                    return bool(right_version)
                return BOTH
            return None
        if self._is_optional_old_api(test, depth):
            return True
        if isinstance(test, ast.Name):
            value = self._module_value(test.id)
            if value is not None:
                return self.old_when(value, depth + 1)
        # jax.__version__.startswith("0.4"), a helper of the version: some release test
        return BOTH if self.is_version(test, depth) else None

    def _releases(self) -> list[jax_versions.Version]:
        target = self.target
        return target.releases() if isinstance(target, jax_versions.Range) else [target]

    def is_version(self, node: ast.AST, depth: int = 0) -> bool:
        """Whether ``node`` is computed from JAX's version (``jax.__version__`` and friends)."""
        for inner in ast.walk(node):
            if isinstance(inner, ast.Attribute) and inner.attr in _VERSION_ATTRIBUTES:
                base = self.qualname(inner.value)
                if base in ("jax", "jaxlib", "jax.version", "jax.lib"):
                    return True
            if isinstance(inner, ast.Name) and depth < 5:
                value = self._module_value(inner.id)
                if value is not None and value is not node and self.is_version(value, depth + 1):
                    return True
            if isinstance(inner, ast.Call) and self.qualname(inner.func) in (
                "importlib.metadata.version", "importlib_metadata.version"
            ) and inner.args and isinstance(inner.args[0], ast.Constant) and inner.args[0].value in ("jax", "jaxlib"):
                return True
        return False

    def _names_old_api(self, module: ast.AST, attribute: ast.AST) -> bool:
        if not (isinstance(attribute, ast.Constant) and isinstance(attribute.value, str)):
            return False
        base = self.qualname(module)
        return base is not None and f"{base}.{attribute.value}" in self.old_names

    def _is_optional_old_api(self, node: ast.AST, depth: int) -> bool:
        """``getattr(jax.dlpack, "to_dlpack", None)``, or a name bound to it / to a gated import."""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr":
            return len(node.args) == 3 and self._names_old_api(node.args[0], node.args[1])
        if isinstance(node, ast.Name):
            if node.id in self.optional_names:
                return True
            value = self._module_value(node.id)
            return value is not None and depth < 5 and self._is_optional_old_api(value, depth + 1)
        return False

    @cached_property
    def _module_values(self) -> dict[str, ast.AST | None]:
        values: dict[str, ast.AST | None] = {}
        for statement in self.ctx.analysis.nodes:
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
                target = statement.targets[0]
                if isinstance(target, ast.Name):
                    name = target.id
                    previous = values.get(name)
                    refined = _refined(statement.value, name, previous) if previous is not None else None
                    values[name] = statement.value if name not in values else refined
        return values

    def _module_value(self, name: str) -> ast.AST | None:
        return self._module_values.get(name)

    # Imports guarded by try/except ----------------------------------------------------

    @cached_property
    def guarded_imports(self) -> dict[ast.ImportFrom, ast.Try]:
        """``from jax.dlpack import to_dlpack`` inside a ``try`` that catches ImportError."""
        found = {}
        for node in self.ctx.analysis.nodes:
            if isinstance(node, ast.Try) and self._catches(node):
                for statement in node.body:
                    for inner in ast.walk(statement):
                        if isinstance(inner, ast.ImportFrom):
                            found[inner] = node
        return found

    @cached_property
    def optional_names(self) -> set[str]:
        """Local names of old API imported under a guard whose fallback rebinds them."""
        names = set()
        for statement in self.guarded_imports:
            for alias in statement.names:
                if f"{statement.module}.{alias.name}" in self.old_names:
                    names.add(alias.asname or alias.name)
        return names

    def fallback_binds(self, guard: ast.Try, name: str) -> str | None:
        """How the ``except`` branch of ``guard`` rebinds ``name``: "callable", "none", or None."""
        how = None
        for handler in guard.handlers:
            for node in ast.walk(handler):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
                    return "callable"
                if isinstance(node, ast.ImportFrom) and any((a.asname or a.name) == name for a in node.names):
                    return "callable"
                if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == name for t in node.targets
                ):
                    how = "none" if _is_none(node.value) else "callable"
        return how

    @staticmethod
    def _catches(node: ast.Try) -> bool:
        """A handler for the error the old API raises on new JAX, with a way on.

        ImportError, AttributeError and TypeError are caught on purpose; a bare or broad
        ``except`` counts only when it falls back to DLPack code rather than re-raising
        or logging, since ``try: ... except Exception: log(); raise`` guards nothing."""
        for handler in node.handlers:
            names = _caught(handler)
            if names & _GUARDING_ERRORS - _BROAD:
                return True
            if (handler.type is None or names & _BROAD) and _falls_back(handler):
                return True
        return False

    # Where a node sits ------------------------------------------------------------------

    def side(self, node: ast.AST) -> str | None:
        """OLD, NEW or BOTH for the innermost gate around ``node``; None when ungated."""
        child = node
        for ancestor in self.ctx.ancestors(node):
            if isinstance(ancestor, (ast.If, ast.IfExp, ast.While)):
                direction = self.old_when(ancestor.test)
                if direction is not None and child is not ancestor.test:
                    in_body = _in_branch(ancestor, child, "body")
                    if direction == BOTH:
                        return BOTH
                    return OLD if in_body == direction else NEW
            if isinstance(ancestor, ast.Try) and self._catches(ancestor):
                # Old API first and the new one as the fallback, or (`try: from_dlpack(t)`
                # `except TypeError: from_dlpack(to_dlpack(t))`) the new one first.
                new_first = not self._makes_capsule(ancestor.body) and any(
                    self._makes_capsule(handler.body) for handler in ancestor.handlers
                )
                if any(child is statement for statement in ancestor.body):
                    if new_first:
                        return NEW
                    if self._removed_call(node) and not any(
                        handler_catches(self.ctx, h, _REMOVAL_ERRORS) for h in ancestor.handlers
                    ):
                        # `jax.dlpack.to_dlpack` raises AttributeError on new JAX: an `except
                        # (TypeError, BufferError)` around it lets that through.
                        child = ancestor
                        continue
                    return OLD
                if any(child is handler for handler in ancestor.handlers):
                    if new_first and "BufferError" in _caught(child):
                        # The new export's own error (a sharded array, a backend without
                        # DLPack): this handler runs on new JAX too, the old API in it breaks.
                        return None
                    return OLD if new_first else NEW
            if isinstance(ancestor, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef)):
                early = self._after_early_exit(ancestor, child)
                if early is not None:
                    return early
            child = ancestor
        return None

    def _removed_call(self, node: ast.AST) -> bool:
        return isinstance(node, ast.Call) and self.qualname(node.func) in self.old_names

    def _makes_capsule(self, body: list[ast.stmt]) -> bool:
        """Whether ``body`` calls a capsule maker (JAX's, torch's, TensorFlow's): the old way."""
        return any(
            isinstance(n, ast.Call) and self.qualname(n.func) in CAPSULE_PRODUCERS
            for statement in body
            for n in ast.walk(statement)
        )

    def _after_early_exit(self, parent: ast.AST, child: ast.AST) -> str | None:
        """``if <new JAX>: return new(x)`` followed by the old code in the same block."""
        body = getattr(parent, "body", None)
        if not isinstance(body, list) or not any(child is s for s in body):
            return None
        for statement in body:
            if statement is child:
                return None
            if isinstance(statement, ast.If) and not statement.orelse and _exits(statement.body):
                direction = self.old_when(statement.test)
                if direction is False:
                    return OLD
                if direction is True:
                    return NEW
                if direction == BOTH:
                    return BOTH
        return None


def _in_branch(statement: ast.AST, child: ast.AST, name: str) -> bool:
    branch = getattr(statement, name)
    if isinstance(branch, list):
        return any(child is s for s in branch)
    return child is branch


def _exits(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise))


def _is_none(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _falls_back(handler: ast.ExceptHandler) -> bool:
    if handler.body and isinstance(handler.body[-1], ast.Raise):
        return False
    return any(
        isinstance(n, ast.Attribute) and "dlpack" in n.attr.lower()
        or isinstance(n, ast.Name) and "dlpack" in n.id.lower()
        for n in ast.walk(handler)
    )


def _caught(handler: ast.ExceptHandler) -> set[str | None]:
    """The names of the exceptions ``handler`` catches (``errors.BufferError``: its last part)."""
    if handler.type is None:
        return set()
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return {kind.attr if isinstance(kind, ast.Attribute) else getattr(kind, "id", None) for kind in types}



def _refined(value: ast.AST, name: str, previous: ast.AST) -> ast.AST | None:
    """``FLAG = FLAG and <test>`` after ``FLAG = <version test>``: the flag as one expression
    (``<version test> and <test>``); None for any other second assignment."""
    if not isinstance(value, ast.BoolOp):
        return None
    own = [v for v in value.values if isinstance(v, ast.Name) and v.id == name]
    if len(own) != 1:
        return None
    return ast.BoolOp(op=value.op, values=[previous if v is own[0] else v for v in value.values])


# Proving a file clean from the blocks that spell a version ------------------------------------
# Whether a file may compare a JAX version string as a string, from the few top-level blocks that
# spell a version, without parsing the whole file (JAX007's proof that a file is clean).
#
# Most files that name ``__version__`` never compare it as a string (warp's 680 kB context.py names
# it twice), yet the check parsed each whole to resolve its names. A comparison JAX007 reports has
# a version string on one side: an attribute ``<chain>.__version__``, or a name the module binds to
# one (``from jax import __version__ as v``, ``V = jax.__version__``, ``W = V``, a project module's
# star import). Each of those spells ``__version__`` or the bound name in the top-level statement
# that holds it, so parsing the blocks (``blocks.top_level_blocks``; of a class, the members,
# ``blocks.class_members``) that spell either, one at a time, and looking at the statements on
# those lines, finds every such comparison. It is read here with any attribute named ``__version__`` taken
# as JAX's (``np.__version__`` too) and every such name as bound to one: more than the check finds,
# never less. ``may_compare_as_strings`` is False only when none is there; then the check has
# nothing to report. Whenever the text cannot be read with certainty (a lone carriage return, a
# character Python folds to an ASCII letter in a name, a block cut inside brackets, a block that
# does not parse, a star import it cannot follow, most of the text kept) it says True, and the
# check reads the file whole. Like JAX001's partial reading, a syntax error in a block it does
# not read is not seen: the file is reported only when a rule reads it whole.

VERSION = "__version__"
_PIECE = 4096  # the text is looked at for non-ASCII characters in pieces: most pieces are ASCII
# Single-quoted strings and comments (none holds a line end): what the bracket count leaves out.
_STRING_OR_COMMENT = r"""#[^\n]*|"[^"\\\n]*(?:\\.[^"\\\n]*)*"|'[^'\\\n]*(?:\\.[^'\\\n]*)*'"""
# A star import, however spelled (`import *`, `import*`, `import \<line break> *`).
_ANY_STAR = r"import(?:[ \t]|\\\n)*\*"  # a literal first: searched fast
# Past this share of the text, parsing the blocks costs about what the whole parse does.
_MOST = 0.5


@cache
def _regex(pattern: str) -> re.Pattern[str]:
    """``pattern`` compiled on first use: a process that never reads a file this way pays nothing
    for it when it imports the gates (compiling is Python code, 1,000-3,000 line events each)."""
    return re.compile(pattern)


def may_compare_as_strings(ctx: FileContext) -> bool:
    """False only when no comparison of ``ctx``'s file orders or slices a version string against
    a string literal as JAX007 reads one (``string_compared_versions``), shown from the blocks
    that spell a version; True when one may, or when unsure. Never reads ``ctx.tree``."""
    text = ctx.text
    if "\r" in text:
        if text.count("\r") != text.count("\r\n"):
            return True  # a lone carriage return ends a line the cut does not see
        text = text.replace("\r\n", "\n")  # same statements, lines and columns
    if not text.isascii() and _folds_to_ascii(text):
        return True
    interiors = string_interiors(text)
    blocks = top_level_blocks(text, interiors) if interiors is not None else None
    if not blocks:
        return True
    names = _star_names(ctx, text, interiors)
    if names is None:
        return True
    reading = _Reading(text, blocks, interiors)
    return reading.may_compare(names)


def _folds_to_ascii(text: str) -> bool:
    """Whether a character of ``text`` folds (NFKC, as Python reads names: ``ｖ`` is ``v``) to an
    ASCII letter, digit or underscore: a name could then be spelled other than the text searched."""
    chars: set[str] = set()
    for start in range(0, len(text), _PIECE):
        piece = text[start : start + _PIECE]
        if not piece.isascii():
            chars.update(piece)
    return any(
        not char.isascii() and any(_is_word_char(folded) for folded in unicodedata.normalize("NFKC", char))
        for char in chars
    )


def _is_word_char(char: str) -> bool:
    """An ASCII letter, digit or underscore."""
    return char.isascii() and (char.isalnum() or char == "_")


def _star_names(ctx: FileContext, text: str, interiors: list[tuple[int, int]]) -> set[str] | None:
    """The names the file's star imports bind to a version string, as ``FileContext._bindings``
    reads them (a library's star import binds none; a project module's, what its text shows);
    None when a star import in code is not spelled `from <module> import *` on one line (`from \\`
    and a line break before the module)."""
    starts = [first for first, _ in interiors]
    names: set[str] = set()
    for found in _regex(_ANY_STAR).finditer(text):
        at = found.start()
        if at and _is_word_char(text[at - 1]):
            continue  # `reimport *` (a name folded to ASCII was ruled out)
        spelled = _star_module(text[text.rfind("\n", 0, at) + 1 : at])
        if spelled is None:
            if in_code(text, at, interiors, starts):
                return None
            continue  # `"import *" in line`
        # (One in a string or comment is read as well: a name too many costs time, never a finding.)
        level, module = spelled
        project = ctx.project
        if (not level and module in LIBRARY_STARS) or project is None:
            continue  # the API table's public names, or nothing known: none is a version string
        bound = project.star_bindings(ctx.root_path, level, module, ctx.text) or {}
        names.update(local for local, target in bound.items() if target in VERSION_STRINGS)
    return names


def _star_module(head: str) -> tuple[int, str | None] | None:
    """(level, module) of a star import whose line up to `import` is ``head`` (`from ..pkg `);
    None when ``head`` does not end so."""
    words = head.split()
    if len(words) < 2 or words[-2] != "from" or not head[-1:].isspace():
        return None
    spec = words[-1]
    module = spec.lstrip(".")
    if module and not all(part.isidentifier() for part in module.split(".")):
        return None
    return len(spec) - len(module), module or None


class _Reading:
    """The blocks of one text that spell a version or a name bound to one, parsed one at a time;
    of each, only the statements on the lines that spell one are looked at (as ``_comparisons``
    of the check does): a comparison, import or assignment that spells a name lies on its line."""

    def __init__(self, text: str, blocks: list[Block], interiors: list[tuple[int, int]]) -> None:
        self.text, self.blocks, self.interiors = text, blocks, interiors
        self.begins = [block.begin for block in blocks]
        self.depths: list[int] | None = [0]  # bracket depth before each block, as far as asked
        self.inside = 0  # the first triple-quoted string after the blocks counted
        self.starts = [first for first, _ in interiors]
        self.members: dict[int, list[Block] | None] = {}  # a `class` block's, where it can be cut
        self.trees: dict[tuple[int, int], ast.Module] = {}  # parsed parts (``_part_at``)
        self.kept_size = 0
        self.compares: list[ast.Compare] = []
        self.versions: set[str] = set()  # names that may be bound to a version string
        self.links: list[tuple[str, str]] = []  # `target = source` at module level: (source, target)

    def may_compare(self, star_names: set[str]) -> bool:
        text = self.text
        self.versions |= star_names
        searched: set[str] = set()
        positions = occurrences(text, VERSION)
        while True:
            if not self._read(positions):
                return True
            self._close()
            words = self.versions - searched
            if not words:
                break
            if not all(word.isascii() for word in words):
                return True  # a name spelled in more than one way (`é`, `e\u0301`)
            searched |= words
            positions = [at for word in words for at in _whole_word(text, word)]
        qualname = self._qualname
        return any(string_compared_versions(qualname, compare) for compare in self.compares)

    def _read(self, positions: list[int]) -> bool:
        """Parse the parts that hold ``positions`` (``_part_at``) and take what their statements
        on those positions' lines say; False when unsure."""
        text, trees = self.text, self.trees
        held: dict[tuple[int, int], list[int]] = {}
        for position in positions:
            if position >= self.begins[0]:  # not in the comments above the first statement
                held.setdefault(self._part_at(position), []).append(position)
        self.kept_size += sum(self._span(part)[1] - self._span(part)[0] for part in held if part not in trees)
        if self.kept_size > _MOST * len(text):
            return False
        for part, found in sorted(held.items()):
            if part not in trees:
                tree = self._parse(part)
                if tree is None:
                    return False
                trees[part] = tree
            begin, _ = self._span(part)
            first = 2 if part[1] > 0 else 1  # a member is parsed under a `class _:` line
            self._take(trees[part], sorted({text.count("\n", begin, position) + first for position in found}))
        return True

    def _part_at(self, position: int) -> tuple[int, int]:
        """(block, member) of ``position``: a `class` block's member where ``class_members`` can
        cut it (0: its decorators and header), -1 for a block read whole."""
        index = bisect.bisect_right(self.begins, position) - 1
        members = self._members(index)
        if members is None:
            return index, -1
        return index, bisect.bisect_right([member.begin for member in members], position) - 1

    def _members(self, index: int) -> list[Block] | None:
        if index not in self.members:
            block = self.blocks[index]
            members = None
            if block.kind == "class" and self._whole_statements(index):
                members = class_members(self.text, block, self.interiors, self.starts)
            self.members[index] = members
        return self.members[index]

    def _span(self, part: tuple[int, int]) -> tuple[int, int]:
        index, member = part
        block = self.blocks[index] if member < 0 else self.members[index][member]
        return block.begin, block.finish

    def _parse(self, part: tuple[int, int]) -> ast.Module | None:
        """A part's tree, its lines counted from its first (a member's from the line after):
        a block alone, a class's header with a `pass` body, a member under `class _:`. None
        when it does not parse, or a block is not whole statements."""
        index, member = part
        begin, finish = self._span(part)
        if member < 0:
            source = self.text[begin:finish] if self._whole_statements(index) else None
        elif member == 0:
            source = self.text[begin:finish] + self.members[index][0].indent + "pass\n"
        else:
            source = "class _:\n" + self.text[begin:finish]
        return None if source is None else parse_quietly(source, "<block>")

    def _take(self, tree: ast.Module, lines: list[int]) -> None:
        versions, body = self.versions, tree.body
        for statement in statements_holding(body, lines):
            kind = statement.__class__
            if kind is ast.ImportFrom:  # an import anywhere binds at module level (`_bindings`)
                versions.update(alias.asname or alias.name for alias in statement.names if alias.name == VERSION)
            elif kind is ast.Import:
                versions.update(a.asname for a in statement.names if a.asname and a.name.endswith(VERSION))
            elif kind is ast.Assign and len(statement.targets) == 1 and any(statement is s for s in body):
                self._bound(statement.targets[0], statement.value)
            for name in child_fields(kind):
                if name in BODY_FIELDS:
                    continue  # statements: ``statements_holding`` gives those that hold a line
                value = getattr(statement, name, None)
                for part in value if value.__class__ is list else (value,):
                    if isinstance(part, ast.AST):
                        self.compares.extend(node for node in walk_values(part) if node.__class__ is ast.Compare)

    def _bound(self, target: ast.AST, value: ast.AST) -> None:
        """A module-level `target = value` (``names.module_bindings``): a version string's name
        when ``value`` is one."""
        if target.__class__ is not ast.Name:
            return
        if value.__class__ is ast.Attribute and value.attr == VERSION:
            self.versions.add(target.id)
        elif value.__class__ is ast.Name:
            self.links.append((value.id, target.id))

    def _close(self) -> None:
        """Follow `W = V` from each name that may be a version string, to a fixed point."""
        versions, changed = self.versions, True
        while changed:
            changed = False
            for source, target in self.links:
                if source in versions and target not in versions:
                    versions.add(target)
                    changed = True

    def _qualname(self, node: ast.AST) -> str | None:
        """A version string's name for any node that may be one, else None (``_version_string``
        looks the answer up in ``VERSION_STRINGS``)."""
        if node.__class__ is ast.Attribute:
            return "jax.__version__" if node.attr == VERSION else None
        if node.__class__ is ast.Name:
            return "jax.__version__" if node.id in self.versions else None
        return None

    def _whole_statements(self, index: int) -> bool:
        """Whether block ``index`` begins and ends outside any bracket: a line at column 0 inside
        brackets looks like a statement of its own (`ok = (` / `jax.__version__` / `>= "0.7")`),
        and its middle part parses alone as an expression."""
        depths = self._depths_to(index + 1)
        return depths is not None and depths[index] == 0 and depths[index + 1] == 0

    def _depths_to(self, last: int) -> list[int] | None:
        """``depths[i]``, the bracket depth of the code before block ``i``, for each ``i`` up to
        ``last``, counted block by block as far as asked (no further than the last block a
        reading keeps); None when unsure: a quote the count cannot place. Triple-quoted strings
        (``interiors``) never span two blocks."""
        depths, text, blocks, interiors = self.depths, self.text, self.blocks, self.interiors
        strip, count = _regex(_STRING_OR_COMMENT).sub, len(interiors)
        while depths is not None and len(depths) <= last:
            block = blocks[len(depths) - 1]
            parts, position, inside = [], block.begin, self.inside
            while inside < count and interiors[inside][0] < block.finish:
                first, last_inside = interiors[inside]
                parts.append(text[position : first - 3])
                position, inside = last_inside + 3, inside + 1
            parts.append(text[position : block.finish])
            self.inside = inside
            code = strip("", "".join(parts))
            if '"' in code or "'" in code:
                depths = self.depths = None
                break
            opened = code.count("(") + code.count("[") + code.count("{")
            depths.append(depths[-1] + opened - code.count(")") - code.count("]") - code.count("}"))
        return depths


def _whole_word(text: str, word: str) -> list[int]:
    """Where ``word`` occurs with no ASCII letter, digit or underscore on either side (more than
    the names Python reads: a non-ASCII neighbour is taken as a boundary)."""
    found, size, length = [], len(text), len(word)
    at = text.find(word)
    while at != -1:
        end = at + length
        if not (at and _is_word_char(text[at - 1])) and not (end < size and _is_word_char(text[end])):
            found.append(at)
        at = text.find(word, at + 1)
    return found
