"""What a name refers to: the one resolver that every analysis and rule asks.

Two questions, each answered here and nowhere else:

- ``canonical(qualified)``: the one public spelling of a qualified name. Private paths
  (``jax._src.dlpack.to_dlpack``) and aliases (``jax.remat``, ``jax.tree.map``) map to the name
  the tables of ``analysis.api`` hold, so a table lists each function once. Where a private
  module's members land in different public modules the mapping is name by name
  (``jax._src.pjit``); a module prefix maps only where every member it holds is re-exported
  under the same name (tests/test_names.py checks both against the installed JAX).
- What an expression names. ``imported(node, bindings)``: through the module's imports alone,
  spelled as imported (``FileContext.qualname``: no analysis, cheap enough for every call of
  a file, and what a partial read of a file can answer). ``Resolver.qualname(node)``
  (``Analysis.qualname``, what a rule asks): canonical, and aware of scopes and values: a local
  binding shadows an import, a local alias of a module is followed, and so are
  ``importlib.import_module("jax.dlpack").x`` and ``getattr(jax.dlpack, "x")`` (two arguments
  only: ``getattr(mod, "x", None)`` is a version gate, not an alias). ``Resolver.spelled``: the
  same reach, the file's spelling kept (for a message that quotes ``jax._src.dlpack``).

A rule asks ``ctx.analysis.qualname(expr)`` and compares with the names of ``analysis.api``
(or its own table of public names); a hot path that needs no scopes asks
``canonical(ctx.qualname(expr))``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable
from functools import lru_cache

from jax_codemod.analysis import api

# Private modules whose members JAX, flax or equinox re-export, each under its own name, from
# one public module. Longest first: a longer prefix is more exact.
_MODULES = {
    "jax._src.dlpack.": "jax.dlpack.",
    "jax._src.api.": "jax.",
    "jax._src.ad_checkpoint.": "jax.",
    "jax._src.shard_map.": "jax.",
    "jax.experimental.shard_map.": "jax.",
    "jax._src.sharding_impls.": "jax.sharding.",
    "jax._src.sharding.": "jax.sharding.",
    "jax._src.mesh.": "jax.sharding.",
    "jax._src.partition_spec.": "jax.sharding.",
    "jax._src.numpy.lax_numpy.": "jax.numpy.",
    "jax._src.numpy.": "jax.numpy.",
    "jax._src.tree_util.": "jax.tree_util.",
    "jax._src.tree.": "jax.tree.",
    "jax._src.lax.control_flow.loops.": "jax.lax.",
    "jax._src.lax.control_flow.conditionals.": "jax.lax.",
    "jax._src.lax.control_flow.": "jax.lax.",
    "jax._src.lax.lax.": "jax.lax.",
    "jax._src.lax.": "jax.lax.",
    "jax._src.random.": "jax.random.",
    "jax._src.array.": "jax.",
    "jax._src.basearray.": "jax.",
    "jax._src.core.": "jax.core.",
    "jax._src.device_array.": "jax.",
    "jax.interpreters.pxla.": "jax.sharding.",
    "flax.nnx.transforms.compilation.": "flax.nnx.",
    "flax.nnx.transforms.autodiff.": "flax.nnx.",
    "flax.nnx.transforms.iteration.": "flax.nnx.",
    "flax.nnx.transforms.transforms.": "flax.nnx.",
    "flax.linen.transforms.": "flax.linen.",
    # `flax.experimental.nnx` was nnx's home before flax 0.8.
    "flax.experimental.nnx.": "flax.nnx.",
    "equinox._jit.": "equinox.",
    "equinox._vmap_pmap.": "equinox.",
    "equinox._ad.": "equinox.",
}
_PREFIXES = tuple(sorted(_MODULES, key=len, reverse=True))

# One name for another, name by name (applied after a module prefix too). The private and
# legacy spellings of the functions and classes that ``analysis.api`` records come from there.
_NAMES = {
    **{record.name: record.public for record in api.API if record.public},
    # jax._src.pjit's members are public in different modules: no prefix maps them all.
    "jax._src.pjit.pjit": "jax.experimental.pjit.pjit",
    "jax._src.pjit.with_sharding_constraint": "jax.lax.with_sharding_constraint",
    # Names a module imports for its own use, not re-exports: they stay as spelled.
    "jax._src.lax.lax.map": "jax._src.lax.lax.map",  # jax._src.util.safe_map
    "jax._src.lax.control_flow.conditionals.map": "jax._src.lax.control_flow.conditionals.map",
    "jax.sharding.use_mesh": "jax.set_mesh",
    "jax.sharding.set_mesh": "jax.set_mesh",
    "jax.NamedSharding": "jax.sharding.NamedSharding",
    "jax.P": "jax.sharding.PartitionSpec",
}


def canonical(qualified: str | None) -> str | None:
    """The one public spelling of ``qualified`` (``jax._src.api.jit`` -> ``jax.jit``)."""
    if qualified is None:
        return None
    renamed = _NAMES.get(qualified)
    if renamed is not None:
        return renamed
    # Asked for nearly every call of a traced function: one C-level test for the common name
    # that starts with none of the prefixes.
    if not qualified.startswith(_PREFIXES):
        return qualified
    found = _REWRITTEN.get(qualified)
    if found is None:
        # (Kept: JAX's own files spell `jax._src.` names again and again, and the prefixes are
        # tried one by one.)
        for private in _PREFIXES:
            if qualified.startswith(private):
                found = _MODULES[private] + qualified[len(private) :]
                break
        found = _NAMES.get(found, found)
        if len(_REWRITTEN) < _REWRITTEN_MOST:
            _REWRITTEN[qualified] = found
    return found


# ``canonical``'s answers for names under a private prefix, for the process (bounded).
_REWRITTEN: dict[str, str] = {}
_REWRITTEN_MOST = 1 << 16


# Import bindings -----------------------------------------------------------------------

AMBIGUOUS = object()  # a module-level name bound to different things


def module_bindings(
    body: list[ast.stmt],
    imports: Iterable[ast.stmt],
    absolute: Callable[[int, str | None], str | None] | None = None,
    star: Callable[[int, str | None], dict[str, str] | None] | None = None,
) -> dict[str, object]:
    """Local name -> the dotted name it is bound to at module level, as spelled (None: bound to
    something else, ``AMBIGUOUS``: to different things). ``imports``: the statements of the
    module that may be imports (``context`` finds them fast), ``body``: its top level.
    ``absolute(level, module)``: the absolute module a relative import names, where the file's
    project is known (``project.View``); without it a relative import binds an unknown.
    ``star(level, module)``: what ``from module import *`` binds, where the project holds the
    module (``View.star_bindings``); without it (or None) a star import binds nothing known."""
    bindings: dict[str, object] = {}

    def bind(name: str, target: str | None) -> None:
        previous = bindings.get(name, target)
        bindings[name] = target if previous == target else AMBIGUOUS

    for node in imports:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bind(alias.asname, alias.name)
                else:
                    head = alias.name.split(".", 1)[0]
                    bind(head, head)
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name == "*":
                    for local, target in ((star and star(node.level, node.module)) or {}).items():
                        bind(local, target)
                    continue
                local = alias.asname or alias.name
                base = node.module if not node.level else absolute(node.level, node.module) if absolute else None
                bind(local, f"{base}.{alias.name}" if base else None)
    # Module-level definitions shadow imports of the same name (a local `jit`).
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bind(node.name, None)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                bind(target.id, imported(node.value, bindings))
    return bindings


def imported(node: ast.AST, bindings: dict[str, object]) -> str | None:
    """The dotted name a name or attribute chain refers to through ``bindings``, as spelled."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    base = bindings.get(node.id)
    if not isinstance(base, str):
        return None
    return ".".join([base, *reversed(parts)])


def local_name_for(bindings: dict[str, object], qualified: str) -> str | None:
    """How a module with ``bindings`` already spells ``qualified``, shortest first, if it can."""
    best: str | None = None
    for local, target in bindings.items():
        if not isinstance(target, str):
            continue
        if qualified == target:
            return local
        if qualified.startswith(target + "."):
            candidate = local + qualified[len(target) :]
            if best is None or len(candidate) < len(best):
                best = candidate
    return best


# The resolver ---------------------------------------------------------------------------


class Resolver:
    """The canonical qualified names of one file's expressions.

    ``bindings``: the module's (``FileContext._bindings``). ``module_level(name)``: whether a
    ``Name`` is bound at module level (a local binding shadows an import); ``holds(name)``: the
    qualified name of the module or library object a name holds, from the value analysis
    (``m = importlib.import_module("jax.dlpack")``), or None. Without them, the imports alone.
    """

    def __init__(
        self,
        bindings: dict[str, object],
        module_level: Callable[[ast.Name], bool] | None = None,
        holds: Callable[[ast.Name], str | None] | None = None,
    ) -> None:
        self.bindings = bindings
        self.module_level = module_level
        self.holds = holds

    def qualname(self, node: ast.AST) -> str | None:
        """The public qualified name ``node`` refers to, or None."""
        return canonical(self.spelled(node))

    def spelled(self, node: ast.AST) -> str | None:
        """The qualified name ``node`` refers to as the file spells it (``jax._src.dlpack.x``:
        a message quotes the file's spelling), or None. What a local name holds comes from the
        value analysis, canonical already."""
        if isinstance(node, ast.Call):
            return self._called(node)
        parts: list[str] = []
        root = node
        while isinstance(root, ast.Attribute):
            parts.append(root.attr)
            root = root.value
        if isinstance(root, ast.Call):
            base = self._called(root)
            return _joined(base, parts) if base else None
        if not isinstance(root, ast.Name):
            return None
        if self.module_level is not None and not self.module_level(root):
            held = self.holds(root) if self.holds is not None else None
            if not held:
                return None
            # A function's own `from jax._src.dlpack import to_dlpack` binds the name too (the
            # bindings hold every import of the file): the file's spelling, when it is that name.
            found, as_imported = _joined(held, parts), imported(node, self.bindings)
            return as_imported if as_imported and canonical(as_imported) == canonical(found) else found
        found = imported(node, self.bindings)
        if found is None and self.holds is not None:
            held = self.holds(root)
            found = _joined(held, parts) if held else None
        return found

    def _called(self, call: ast.Call) -> str | None:
        """``importlib.import_module("m")`` -> ``m``; ``getattr(m, "x")`` -> ``m.x``."""
        if isinstance(call.func, ast.Name) and call.func.id == "getattr":
            attribute = _string(call.args[1]) if len(call.args) == 2 and not call.keywords else None
            base = self.spelled(call.args[0]) if attribute else None
            return f"{base}.{attribute}" if base else None
        # `import_module(name, package)`: the package anchors a relative name only.
        if not 1 <= len(call.args) <= 2 or any(keyword.arg != "package" for keyword in call.keywords):
            return None
        name = _string(call.args[0])
        if not name or name.startswith(".") or self.qualname(call.func) != "importlib.import_module":
            return None
        return name


def _string(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _joined(base: str, parts: list[str]) -> str:
    return ".".join([base, *reversed(parts)])


def name_lines(text: str, name: str) -> list[int]:
    """The lines (1-based, counting LFs) where ``name`` stands as a whole word: not next to an
    ASCII letter, digit or underscore. Every token ``name`` of the text is among them (a name
    token never touches another identifier character, and only keywords may follow a number
    directly); a non-ASCII neighbour only adds a line."""
    lines: list[int] = []
    line, counted = 1, 0
    count = text.count
    for found in _whole_word_starts(text, name):
        line += count("\n", counted, found)
        counted = found
        if not lines or lines[-1] != line:
            lines.append(line)
    return lines


# Up to how many spellings of a name are told whole words one ``str.find`` at a time, rather than
# by a pattern of the name's own: compiling one costs as much as ~100 finds (re's parser is
# Python, and the analysis asks of many names once each), but thousands in a text cost more.
_FOUND_BY_FIND = 64
_WORD_CHARACTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def _whole_word_starts(text: str, name: str):
    """Where ``name`` starts not next to an ASCII letter, digit or underscore, left to right, as
    the pattern ``NAME(?![A-Za-z0-9_])(?<![A-Za-z0-9_]NAME)`` finds them (no two overlap)."""
    if not name or text.count(name) > _FOUND_BY_FIND:
        # The look-behind comes last: a pattern that starts with the name is searched for fast.
        spelled = re.escape(name)
        yield from (m.start() for m in re.finditer(rf"{spelled}(?![A-Za-z0-9_])(?<![A-Za-z0-9_]{spelled})", text))
        return
    find, size, end, word = text.find, len(name), len(text), _WORD_CHARACTERS
    at = find(name)
    while at != -1:
        after = at + size
        if (after == end or text[after] not in word) and (not at or text[at - 1] not in word):
            yield at
            at = find(name, after)
        else:
            at = find(name, at + 1)


@lru_cache(maxsize=8)  # asked for each name a file's analysis looks up, of the same few texts
def spelled_as_parsed(text: str) -> bool:
    """Whether each identifier of ``text``'s tree is spelled in the text as the tree has it,
    on the line the tree gives (counting LFs).

    Python folds identifiers to NFKC (``ｆｏｏ`` and ``ﬁ`` name ``foo`` and ``fi``): that needs
    a non-ASCII character that may be part of a name and folds to ASCII. A lone CR ends a line
    for the parser but not for a count of LFs.
    """
    if "\r" in text:
        return False
    if text.isascii():
        return True
    import unicodedata

    return not any(
        ("_" + char).isidentifier() and unicodedata.normalize("NFKC", char).isascii()
        for char in set(_NON_ASCII.findall(text))
    )


_NON_ASCII = re.compile(r"[^\x00-\x7f]")
