"""A checked file's view of the other modules of its project (issue 34).

The value analysis and the transform spellings of one file ask here about a name the file imports
from a module of its own project (``from .compile import compiled``, ``from pipeline.data import
make_batch``): the module is found as Python finds it (``modules.ModuleMap``), parsed on first use,
and answered by its own analysis, exactly as the file's own names are. What a module of the root
holds is read from its text only: nothing is imported or run.

- ``Root``: one project root. Its file list and its files' texts come from the engine (``files``,
  ``read``); parsed trees are kept per process, by content, for every file checked under it.
- ``View``: what one checked file sees of its root. Every module it reads gets a context of its
  own for this file alone (trees are shared, analyses are not), so a file's findings never depend
  on which files the same process checked before it: ``-j 1``, ``-j N``, cached and uncached runs
  agree. ``reads`` records each module read and its digest, for the result cache.

A name whose top-level package is a library the API table describes (``jax``, ``numpy``,
``torch``, ...) or the standard library is never looked up in the root: a project that vendors
one (JAX's own repository) is judged by the table, as everywhere else.
"""

from __future__ import annotations

import ast
import re
import sys
import warnings
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable
from functools import cached_property
from pathlib import PurePosixPath
from typing import TypeVar

from jax_codemod.analysis.context import FileContext
from jax_codemod.analysis.module_text import (
    Reach,
    first_parts,
    imports_any,
    source_text,
    star_exports,
    words_of,
)
from jax_codemod.analysis.modules import ModuleMap

# Top-level packages never read from a root: the API table's libraries and Python's own.
LIBRARIES = frozenset(
    {"jax", "jaxlib", "numpy", "torch", "cupy", "tensorflow", "flax", "equinox", "optax", "chex"}
) | frozenset(sys.stdlib_module_names)
# How deep one question may go through modules (a re-export of a re-export of ...).
MAX_MODULE_DEPTH = 8
# View.module_of's answers kept per root (each checked file asks about its imports many times).
MODULE_ANSWERS = 100_000
# Parsed trees kept, for all roots together (source characters): the modules most files import
# (a package's `core`, its `config`) stay parsed across the files that import them. A tree
# takes ~30 bytes of memory per character of source (this many: ~60 MB at most). Each checked
# file of a model package reads the same base classes and mixins (EasyDeL: ~1.5 M characters),
# and a cache smaller than that set drops each of them before the next file asks again: at
# 2**19 EasyDeL parsed 1,862 modules (120 MB of text, 14 s of its 40 s) where 2**21 parses 466.
TREE_CACHE_CHARS = 2**21
# The largest module of a root read for its values (source characters): larger is read as a
# library's. Fixed on its own: what is read must not change with what is kept.
MAX_PARSED_CHARS = 2**18
# View.about's and View.known's answers kept per root: small facts of a module, by content.
MODULE_FACTS = 10_000

_T = TypeVar("_T")

# A coding declaration (PEP 263), and the encodings it may name that decode ASCII bytes as
# themselves and no other bytes as ASCII (``Root.holds_any`` then searches the bytes).
_CODING = re.compile(rb"coding[:=][ \t]*([-\w.]+)")
_ASCII_KEEPING = frozenset(
    {b"utf-8", b"utf8", b"utf-8-sig", b"ascii", b"us-ascii", b"latin-1", b"latin1", b"iso-8859-1", b"iso8859-1", b"cp1252"}
)


def _holding_in(text: str | None, questions: list[tuple[bytes, ...]]) -> list[tuple[bytes, ...]]:
    """The ``questions`` of which ``text`` (a module's, None where it has none) holds a word."""
    return [words for words in questions if text and any(word.decode("ascii") in text for word in words)]


# Whitespace to str.split() and not to bytes.split() (neither is whitespace to Python's tokenizer).
_STR_ONLY_SEPARATORS = (b"\x1c", b"\x1d", b"\x1e", b"\x1f")
# Up to how many importable names the gate looks for in the whole text of a library's own file
# before reading its import lines: a search of the text each, where reading the import lines
# is one search (for the word `import`) and ~3 us for each statement found.
_NAMES_LOOKED_FOR = 2


class Root:
    """One project root: its modules, and their trees on demand.

    ``files()``: the root's Python files, relative posix paths (asked once, on first need).
    ``read(path)``: that file's text and a digest of its bytes, or (None, digest) when it cannot
    be read or is too large to parse (the engine's limits apply). ``raw(path)``: its bytes, or
    None where ``read`` gives no text for want of them (``holds_any``; default: from ``read``).
    """

    def __init__(
        self,
        files: Callable[[], Iterable[str]],
        read: Callable[[str], tuple[str | None, str]],
        raw: Callable[[str], bytes | None] | None = None,
    ) -> None:
        self._files = files
        self._read = read
        self._raw = raw
        self._holding: dict[tuple[bytes, ...], bool] = {}  # ``holds_any``'s answers
        self.module_answers: dict[tuple[str, str], tuple[str, tuple[str, ...]] | None] = {}  # module_of's
        # The digest of each module whose text the text-level questions (``Reach``) read this
        # run, as first read: their answers are kept for the run, so a file whose question
        # was answered from them depends on those bytes though it read nothing itself.
        self.seen: dict[str, str] = {}
        self._reach: Reach | None = None  # reaches' answers
        self.facts: dict[tuple[str, str, Callable], object] = {}  # View.about's and View.known's
        self._scanned: tuple[bytes | str, str, bool] | None = None  # may_import's last bytes or text, file, answer
        self._relative_answers: dict[str, bool] = {}  # ``_relative_may_import``'s, by file
        self._importable_by_folder: dict[str, tuple[frozenset[str], frozenset[bytes]]] = {}  # ``_importable``'s
        self._importable_by_file: dict[str, tuple[frozenset[str], frozenset[bytes]]] = {}  # the same, by file

    @cached_property
    def modules(self) -> ModuleMap:
        return ModuleMap.of(self._files())

    def module_of(self, qualified: str, importer: str) -> tuple[str, list[str]] | None:
        """The root's module that ``qualified`` lies in (the longest prefix that is one, found from
        ``importer`` as Python finds it), and the attribute path after it; None outside the root."""
        importable = self._importable_by_file.get(importer) or self._importable(importer)
        if qualified.split(".", 1)[0] not in importable[0]:
            # No module is importable from there under that first part (``_importable``, libraries
            # left out): most of a file's imports, the standard library's.
            return None
        # The answer depends on the importer only through its script folder (``find``): the
        # files of one folder share it.
        key = (qualified, self.modules.script_folder(importer))
        answers = self.module_answers
        if key not in answers:
            if len(answers) >= MODULE_ANSWERS:
                answers.clear()  # bounded: a huge tree's files ask mostly their own imports
            answers[key] = self._module_of(qualified, importer)
        found = answers[key]
        return None if found is None else (found[0], list(found[1]))

    def _module_of(self, qualified: str, importer: str) -> tuple[str, tuple[str, ...]] | None:
        parts = qualified.split(".")
        modules = self.modules
        for end in range(len(parts), 0, -1):
            found = modules.find(importer, ".".join(parts[:end]))
            if found is not None:
                return found.path, tuple(parts[end:])
        return None

    def _importable(self, importer: str) -> tuple[frozenset[str], frozenset[bytes]]:
        """The first parts an absolute import in the file at ``importer`` can load a module of
        the root by (``ModuleMap.first_parts_from`` of its script folder), libraries left out;
        and the same in UTF-8. Far fewer than every folder and file stem of the root: a
        library's files (`jax/_src/core.py`) are importable as `jax...` only."""
        found = self._importable_by_file.get(importer)
        if found is None:
            # (Kept by file too: ``module_of`` asks it of every name a file reads.)
            folder = self.modules.script_folder(importer)
            found = self._importable_by_folder.get(folder)
            if found is None:
                names = self.modules.first_parts_from(folder) - LIBRARIES
                # (A file name that is no UTF-8 is kept as surrogates: such a name is no identifier,
                # so no import names it, and its escaped bytes only ever add a search.)
                found = self._importable_by_folder[folder] = (
                    names, frozenset(name.encode("utf-8", "surrogateescape") for name in names)
                )
            self._importable_by_file[importer] = found
        return found

    def holds_any(self, words: tuple[bytes, ...]) -> bool:
        """Whether the text of some module of the root, as ``read`` gives it (what every
        text-level question reads), holds one of ``words`` (ASCII). Asked once per run and
        words, and the search stops at the first such module: a root that holds them (most of a
        JAX tree's) costs a few reads; one that holds none (a tree without JAX: black, libcst)
        one read of each module, undecoded, and a search of its bytes per word, where every
        question it spares would read modules and search their text anyway."""
        return self.holds_each((words,))[0]

    def known_to_hold(self, words: tuple[bytes, ...]) -> bool:
        """Whether ``holds_any(words)`` was answered yes this run (no search if not)."""
        return self._holding.get(words) is True

    def holds_each(self, questions: tuple[tuple[bytes, ...], ...]) -> list[bool]:
        """``holds_any`` of each of ``questions``, from one pass over the modules that stops once
        every answer is yes: the project gate asks each waiting rule's needs of one root, and a
        pass per rule would read a root without them (or with only some) once per rule."""
        open_questions = [words for words in dict.fromkeys(questions) if words not in self._holding]
        for path in self._files() if open_questions else ():
            for words in self._module_holds(path, open_questions):
                self._holding[words] = True
                open_questions.remove(words)
            if not open_questions:
                break
        for words in open_questions:
            self._holding[words] = False
        return [self._holding[words] for words in questions]

    def _module_holds(self, path: str, questions: list[tuple[bytes, ...]]) -> list[tuple[bytes, ...]]:
        """The ``questions`` (each a tuple of words) of which the module at ``path`` holds a word,
        from one read of it."""
        if self._raw is None:
            return _holding_in(self._read(path)[0], questions)
        data = self._raw(path)
        if data is None:
            return []  # (``read`` gives no text either)
        # (A superset where the text is not the bytes': a question more, never one less.)
        held = [words for words in questions if any(word in data for word in words)]
        if len(held) == len(questions):
            return held
        # Bytes decoded as UTF-8 or another encoding that keeps ASCII as it is hold an ASCII word
        # where their text does. Another (`# coding: utf-7` spells `d` as `+AGQ-`) is read as
        # ``read`` decodes it.
        first = data.find(b"\n")
        second = data.find(b"\n", first + 1) if first >= 0 else -1
        named = _CODING.findall(data[:second] if second >= 0 else data)
        if all(name.lower().replace(b"_", b"-") in _ASCII_KEEPING for name in named):
            return held
        return held + _holding_in(self._read(path)[0], [words for words in questions if words not in held])

    def prepare(self, importer: str) -> None:
        """List the root and find what its imports can load from the folder of the file at
        ``importer`` (``engine.project.prepare``: before a pool forks)."""
        self._importable(importer)

    def may_import(self, source: bytes, importer: str) -> bool:
        """``_may_import`` of the bytes of the file at ``importer``. Bytes that hold none of a
        few importable names anywhere (a name in the text is one in its bytes) can import the
        root only by a relative import, and not at all from a library's own file (most files of
        a tree of installed packages: `orbax` is the one name of such a root), which is never
        read further. Else, where they are ASCII without the four separators that split words
        in a str and not in bytes (``\\x1c``..``\\x1f``), the import lines are scanned
        undecoded: the same first parts, and most files that import nothing of their project
        are never decoded."""
        scanned = self._scanned
        if scanned is not None and scanned[0] is source and scanned[1] == importer:
            return scanned[2]  # (the engine asks before the gate's budget, the gate again in it)
        names = self._importable(importer)[1]
        if self._names_none(source, importer, names):
            found = False
        elif not source.isascii() or any(separator in source for separator in _STR_ONLY_SEPARATORS):
            return self._may_import(source_text(source), importer)
        else:
            found = imports_any(source, names, lambda: self._relative_may_import(importer))
        # The same file's check asks again, of its decoded text (JAX001's question across
        # modules starts from it): the answer of its last bytes is kept for that.
        self._scanned = (source, importer, found)
        return found

    def _may_import(self, text: str, importer: str) -> bool:
        """From the first part of each import, one scan: whether ``text``, the file at
        ``importer``, may import anything from the root (most files of a tree import only
        libraries, whose names no module of the root has)."""
        scanned = self._scanned
        if scanned is not None and scanned[1] == importer and len(text) == len(scanned[0]):
            # The bytes ``may_import`` scanned last (ASCII: the same text), or the text.
            known = scanned[0]
            if known.__class__ is str:
                if known == text:
                    return scanned[2]
            elif text.isascii() and text.encode("ascii") == known:
                return scanned[2]
        names = self._importable(importer)[0]
        if self._names_none(text, importer, names):
            found = False
        else:
            found = imports_any(text, names, lambda: self._relative_may_import(importer))
        self._scanned = (text, importer, found)
        return found

    def _names_none(self, text: str | bytes, importer: str, names: frozenset) -> bool:
        """Whether ``text`` (of the file at ``importer``, str or bytes with ``names`` to match)
        surely imports nothing of the root without its import lines read: a library's own
        file (no relative import reaches the root) that holds none of a few ``names``."""
        return (
            len(names) <= _NAMES_LOOKED_FOR
            and not self._relative_may_import(importer)
            and not any(name in text for name in names)
        )

    def _relative_may_import(self, importer: str) -> bool:
        """Whether a relative import in the file at ``importer`` may name a module of the root:
        the file is a module whose package is no library's. A library's own files (a copy of
        equinox in the tree) import the library through their relative imports, as
        ``modules.ModuleMap.absolute`` resolves them from the file's own name, and
        ``module_of`` leaves a library's names out."""
        answers = self._relative_answers
        found = answers.get(importer)
        if found is None:
            # Of every name the file may have (``tops_of``: no sort of the root's names, which
            # the gate's first look at a library's file does not need); True where any of them
            # is no library's, which may pass a file for nothing, never fail one.
            found = answers[importer] = any(top not in LIBRARIES for top in self.modules.tops_of(importer))
        return found

    def imports_project(self, importer: str, text: str) -> bool:
        """Whether the file at ``importer`` (its text ``text``) imports anything from the root."""
        # What the imports bind in the root (none, from one scan, where every import's first
        # part is a library's): the questions that follow read the same.
        bound, stars = self.file_bindings(importer, text)
        return bool(bound) or any(self.module_of(star, importer) is not None for star in stars)

    def file_bindings(self, importer: str, text: str) -> tuple[dict[str, list[str]], tuple[str, ...]]:
        """``module_text.Reach.file_bindings``: what the imports of the file at ``importer`` bind
        in the root, and the modules it star-imports."""
        return self._reacher().file_bindings(importer, text)

    def reaches(
        self,
        key: str,
        wanted: Callable[[str], bool],
        importer: str,
        text: str,
        names: Callable[[str], bool] | None = None,
        follow: bool | str = True,
    ) -> bool:
        """Whether the file at ``importer`` (its text ``text``) imports a name of the root that
        leads, from the texts alone, to text ``wanted`` accepts (``module_text.Reach``; ``key``
        names the question, whose answers are kept for the run; ``names``: only the imported
        names it accepts count; ``follow``: through what blocks use, not only re-exports)."""
        return self._reacher().from_file(key, wanted, importer, text, names, follow)

    def name_reaches(
        self, key: str, wanted: Callable[[str], bool], qualified: str, importer: str, follow: bool | str = True
    ) -> bool:
        """``module_text.Reach.from_name``: whether a name of the root leads to wanted text."""
        return self._reacher().from_name(key, wanted, qualified, importer, follow)

    def reexport(self, path: str, name: str) -> str | None:
        """``module_text.Reach.reexport``: the qualified name the module at ``path`` imports
        ``name`` from, when that import is all that binds it there (read from the text)."""
        return self._reacher().reexport(path, name)

    def _reacher(self) -> Reach:
        if self._reach is None:
            modules = self.modules
            self._reach = Reach(
                self._reach_text, self.module_of, modules.absolute, self._may_import, modules.script_folder, MAX_PARSED_CHARS
            )
        return self._reach

    def _reach_text(self, path: str) -> str:
        text, digest = self._read(path)
        self.seen.setdefault(path, digest)
        return text or ""

    def text_depends(self, starts: Iterable[str]) -> dict[str, str]:
        """The modules the text-level answers about ``starts`` (module paths) may have read,
        with the digests read: those reachable from them through the imports of the modules
        read (``Reach.read_closure``)."""
        if self._reach is None:
            return {}
        seen = self.seen
        return {path: seen[path] for path in self._reach.read_closure(starts) if path in seen}

    def tree(self, path: str) -> tuple[str, str, ast.Module | None]:
        """(digest, text, tree) of ``path``; tree None when it cannot be read or parsed."""
        text, digest = self._read(path)
        if text is None:
            return digest, "", None
        key = (path, digest)
        trees = _TREES.trees
        if key in trees:
            trees.move_to_end(key)
            kept = trees[key]
            return digest, text, kept[1] if kept else None
        # A module this large is read as a library is (its names' values unknown): parsing it
        # again for every file that imports a name of it costs more than the rest of their
        # checks (the texts still feed ``reaches``).
        tree = _parse(text, path) if len(text) <= MAX_PARSED_CHARS else None
        _TREES.keep(key, text, tree)
        return digest, text, tree


class _Trees:
    """The parsed trees kept (``TREE_CACHE_CHARS`` of source at most, the least recently used
    dropped first), for every root: a tree depends only on its text (the key holds its digest),
    and a pool's worker checks the files of several roots in turn, so a cache per root, dropped
    whenever the root changed, parsed the modules most files import again and again."""

    def __init__(self) -> None:
        self.trees: OrderedDict[tuple[str, str], tuple[str, ast.Module] | None] = OrderedDict()
        self.chars = 0

    def keep(self, key: tuple[str, str], text: str, tree: ast.Module | None) -> None:
        if tree is None:
            self.trees[key] = None
            return
        self.trees[key] = (text, tree)
        self.chars += len(text)
        while self.chars > TREE_CACHE_CHARS:
            _, old = self.trees.popitem(last=False)
            self.chars -= len(old[0]) if old else 0

    def clear(self) -> None:
        self.trees.clear()
        self.chars = 0


_TREES = _Trees()


def forget_trees() -> None:
    """Free the parsed trees kept (a new run reads its roots afresh)."""
    _TREES.clear()


def _parse(text: str, path: str) -> ast.Module | None:
    """The module's tree, or None: a module that does not parse (or nests too deep for the
    parser) is outside what the analysis can read, as a third-party module is."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes in someone else's file are not ours to report
            return ast.parse(text, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


class View:
    """What the checked file at ``path`` (relative to the root) sees of its root."""

    libraries = LIBRARIES  # top-level packages never looked up in the root

    def __init__(self, root: Root, path: str) -> None:
        self.root = root
        self.path = path if _normal(path) else str(PurePosixPath(path))
        self.reads: dict[str, str] = {}  # module path -> digest of the bytes read
        # (importer, name) -> ``resolution`` of each name asked about that a module added to
        # the root could answer for otherwise: no module holds it (`helpers.to_torch` before
        # `helpers.py` exists; `absl.flags`), or a package holds it as an attribute
        # (`pkg.helpers` before `pkg/helpers.py` exists).
        self.unresolved: dict[tuple[str, str], str] = {}
        # What the text-level questions started from (``text_depends``): module paths, names
        # asked about, and the file's own text (its imports), resolved only when asked.
        self._text_starts: set[str] = set()
        self._asked_names: set[str] = set()
        self._asked_text: str | None = None
        self._contexts: dict[str, FileContext | None] = {}
        self._asking: list[str] = []

    # Names --------------------------------------------------------------------------

    def absolute(self, importer: str | None, level: int, module: str | None) -> str | None:
        """The absolute module of ``from <level dots><module> import ...`` in ``importer``."""
        return self.root.modules.absolute(importer or self.path, level, module)

    def module_of(self, qualified: str, importer: str | None = None) -> tuple[str, list[str]] | None:
        """``Root.module_of`` from ``importer`` (default: this file)."""
        importer = importer or self.path
        found = self.root.module_of(qualified, importer)
        if (found is None and qualified.split(".", 1)[0] not in LIBRARIES) or (found and found[1] and _package(found[0])):
            self.unresolved[(importer, qualified)] = resolution(found)
        return found

    def absent(self) -> dict[str, str]:
        """``unresolved`` as entries of a result's ``depends`` (``absent_key`` -> its
        ``resolution``): a cached result is good only while those names resolve as they did."""
        return {absent_key(importer, qualified): found for (importer, qualified), found in self.unresolved.items()}

    def may_import(self, source: bytes) -> bool:
        """Whether the file's bytes ``source`` may import anything of the root (``Root.may_import``):
        False shows ``imports_project`` is False without decoding them."""
        return self.root.may_import(source, self.path)

    def imports_project(self, text: str) -> bool:
        """``Root.imports_project`` for this file, whose text is ``text``."""
        self._asked_text = text
        return self.root.imports_project(self.path, text)

    def reexport(self, path: str, name: str) -> str | None:
        """``Root.reexport``."""
        self._text_starts.add(path)
        return self.root.reexport(path, name)

    def name_reaches(self, key: str, wanted: Callable[[str], bool], qualified: str, follow: bool | str = True) -> bool:
        """``Root.name_reaches`` from this file."""
        self._asked_names.add(qualified)
        return self.root.name_reaches(key, wanted, qualified, self.path, follow)

    def text_depends(self) -> dict[str, str]:
        """The modules (and the digests read) that the text-level answers this file was given
        may depend on: a cached result of it is good only while they are unchanged."""
        starts = set(self._text_starts)
        names = set(self._asked_names)
        if self._asked_text is not None:
            bound, stars = self.root.file_bindings(self.path, self._asked_text)
            names.update(q for targets in bound.values() for q in targets)
            names.update(stars)
            # The imports the text showed are of no module of the root (so nothing was asked of
            # them): a module added under that name would be (``unresolved``).
            names.update(name for dots, name in first_parts(self._asked_text) if not dots and name not in LIBRARIES)
        for qualified in names:
            found = self.module_of(qualified)
            if found is not None and found[0] != self.path:
                starts.add(found[0])
        return self.root.text_depends(starts) if starts else {}

    def star_bindings(self, importer: str, level: int, module: str | None, text: str) -> dict[str, str] | None:
        """What ``from <level dots><module> import *`` in the module at ``importer`` (its text
        ``text``) binds, where the root holds that module: each name of it that ``text`` spells
        -> its qualified name (a name the module defines: `pkg.helpers.to_torch`; one it
        imports: what it imports it as, `numpy` for its `np`), as far as the module's text
        shows (``module_text.star_exports``: its ``__all__`` where it lists one). None for a
        library's star import, as before: nothing known."""
        qualified = self.absolute(importer, level, module) if level else module
        found = self.module_of(qualified, importer) if qualified else None
        if found is None or found[1] or found[0] in (importer, self.path):
            return None
        path = found[0]
        words = words_of(text)
        bound = {}
        for name, (from_level, from_module, attribute) in self.about(path, star_exports).items():
            if name not in words:
                continue
            if not from_module and attribute is None:
                bound[name] = f"{qualified}.{name}"
                continue
            base = self.root.modules.absolute(path, from_level, from_module or None) if from_level else from_module
            if base:
                bound[name] = f"{base}.{attribute}" if attribute else base
        return bound

    def reaches(
        self,
        key: str,
        wanted: Callable[[str], bool],
        text: str,
        names: Callable[[str], bool] | None = None,
        follow: bool | str = True,
    ) -> bool:
        """``Root.reaches`` for this file, whose text is ``text``."""
        self._asked_text = text
        return self.root.reaches(key, wanted, self.path, text, names, follow)

    # Modules ------------------------------------------------------------------------

    def context(self, path: str) -> FileContext | None:
        """The context of the root's module at ``path`` for this file, or None (unreadable,
        unparsable, the checked file itself, or asked for while a question about it is open)."""
        if path == self.path:
            return None  # the file's own names are its own analysis's to answer
        if path in self._contexts:
            return self._contexts[path]
        digest, text, tree = self.root.tree(path)
        self.reads[path] = digest
        ctx = None
        if tree is not None:
            ctx = FileContext(path, text, tree)
            ctx.root_path = path
            # Weakly: the view holds the contexts, a context must not hold the view alive.
            ctx.project = weakref.proxy(self)
        self._contexts[path] = ctx
        return ctx

    def text(self, path: str) -> str:
        """The text of the root's module at ``path`` ("" when unreadable), without parsing it:
        a question a cheap look at the text can answer needs no tree."""
        if path in self._contexts:
            ctx = self._contexts[path]
            return ctx.text if ctx is not None else ""
        text, digest = self.root._read(path)
        self.reads[path] = digest
        return text or ""

    def about(self, path: str, fact: Callable[[str], _T]) -> _T:
        """``fact(text)`` of the root's module at ``path`` (``text`` as ``View.text`` gives it).
        ``fact`` must depend on the text alone: its answer is kept per content for every file
        checked under the root (the files of a package ask the same of the same modules)."""
        facts = self.root.facts
        digest = self.reads.get(path)
        key = (path, digest, fact)
        if digest is None or key not in facts:
            text = self.text(path)
            key = (path, self.reads[path], fact)
            if key not in facts:
                if len(facts) >= MODULE_FACTS:
                    facts.clear()
                facts[key] = fact(text)
        return facts[key]  # type: ignore[return-value]

    def known(self, path: str, fact: Callable[[FileContext], _T]) -> _T | None:
        """``fact(context)`` of the root's module at ``path``, or None where ``context`` gives
        none. ``fact`` must depend on that module alone (its text, its place in the root, its
        own analysis): its answer is kept per content, so a module that many files ask the same
        of is parsed once a run for them, not once a file."""
        facts = self.root.facts
        digest = self.reads.get(path)
        key = (path, digest, fact)
        if digest is None or key not in facts:
            ctx = self.context(path)
            if ctx is None:
                return None
            key = (path, self.reads[path], fact)
            if key not in facts:
                if len(facts) >= MODULE_FACTS:
                    facts.clear()
                facts[key] = fact(ctx)
        return facts[key]  # type: ignore[return-value]

    def asking(self, path: str):
        """A guard around a question to the module at ``path``: False (answer unknown) when it is
        open already or the chain of modules is too deep, else a context manager."""
        if path in self._asking or len(self._asking) >= MAX_MODULE_DEPTH:
            return None
        return _Asking(self._asking, path)

    def release(self) -> None:
        """Free every module's analysis read for this file (the engine calls it when the file is
        done, through ``FileContext.release`` of the context that owns the view)."""
        contexts, self._contexts = self._contexts, {}
        for ctx in contexts.values():
            if ctx is not None:
                ctx.release()


# How a ``depends`` key for a name's resolution (``View.absent``) starts: never a module path.
ABSENT = "?"


def _normal(path: str) -> bool:
    """Whether ``path`` is already as ``PurePosixPath`` writes it (the engine's paths are: asked
    for every checked file, the parse of a path costs more than this look)."""
    return bool(path) and "//" not in path and not path.endswith(("/", "/.")) and not path.startswith("./") and "/./" not in path and path != "."


def absent_key(importer: str, qualified: str) -> str:
    return f"{ABSENT}{importer}\0{qualified}"


def resolution(found: tuple[str, list[str]] | None) -> str:
    """``module_of``'s answer as text: the module and how many attributes follow it; "" for none."""
    return "" if found is None else f"{found[0]}\0{len(found[1])}"


def _package(path: str) -> bool:
    """Whether the module at ``path`` is a package (an `__init__`, or a namespace folder): its
    attribute may be a submodule added later, unlike a plain module's."""
    return path.rsplit("/", 1)[-1].startswith("__init__.") or not path.endswith((".py", ".pyi"))


def absent_name(key: str) -> tuple[str, str]:
    """(importer, name) of an ``absent_key``."""
    importer, _, qualified = key[len(ABSENT) :].partition("\0")
    return importer, qualified


class _Asking:
    def __init__(self, stack: list[str], path: str) -> None:
        self.stack, self.path = stack, path

    def __enter__(self) -> None:
        self.stack.append(self.path)

    def __exit__(self, *_exc) -> None:
        self.stack.pop()
