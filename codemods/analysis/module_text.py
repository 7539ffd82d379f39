"""What a module's text says of its imports and top-level definitions, read without parsing it.

Issue 34's gate. A file that holds no export or concrete-only access of its own can still reach
one through a function, class or method of another module of its project
(``from .interop import to_torch`` and ``to_torch(batch)``). Parsing every such file, and every
module it imports, to find out would cost more than the rest of a run: the engine asks here
first, from texts alone, whether a name the file imports can lead to text a rule looks for.

- ``imports(text)``: the import statements of a text, anywhere in it (``from .a import (b, c)``,
  ``import a.b as c``), as ``Import`` records.
- ``definitions(text)``: each top-level ``def`` and ``class`` with the text of its block
  (decorators included), cut at the next line that starts in column 0 with code.
- ``Reach``: for one predicate over texts (a rule's "holds an export", "holds an access"),
  whether a name imported from a module of the root leads to text the predicate accepts: the
  name's own block, the module's other definitions the block names, the names the module
  imports and the block names, a re-export, through any number of modules. Answers are
  memoized per root and key, so a module is scanned once per run and process however many files
  import it, and never depend on which file asked first.

The gate only narrows what is parsed: it may pass a file that has nothing (the analysis then
finds nothing), and it must not fail one that has something. Its approximations lean that way:
a name it cannot place (a module-level variable, a star import, a name bound at run time) is
judged by its module's whole text.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache

from jax_codemod.analysis.words import word_starts

# `from .a.b import x, y as z`, `from . import (x,\n y)`, `import a.b as c, d`, matched at the
# start of a line that holds the word `import` (found with str.find: a regex anchored at every
# line start of a large module costs more than the rest of the gate).
# The module's first character is no dot (`(\.*)` and `[\w.]*` could split a run of dots every
# way: `from ....import` was quadratic in its dots, issue 53), and a parenthesised list is found
# by ``imports`` (a `(` without its `)` would send the regex to the text's end at every import).
_IMPORT = re.compile(
    r"[ \t]*(?:from[ \t]+(\.*)[ \t]*(\w[\w.]*|)(?:[ \t]+|(?<=\.)(?<!\w\.))import[ \t]*(\(?)|import[ \t]+([^\n#;]+))"
)
_REST_OF_STATEMENT = re.compile(r"[^\n#;]*")
_DEFINITION = re.compile(r"(?:async[ \t]+)?(?:def|class)[ \t]+([A-Za-z_]\w*)")
# A module-level assignment (`backend = JaxBackend()`, `to_host: Callable = np.asarray`).
_ASSIGNMENT = re.compile(r"([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=(?!=)")
# What a line in column 0 starts with where it continues the block above instead of ending it:
# space, a comment, a closing bracket (a signature's `):`).
_NOT_CODE = frozenset(" \t\r\n\f\v#)]}")
_CODE_LINE = re.compile(r"\n(?=[^ \t\r\n\f\v#)\]}])")  # a line break before such a line's first character
_WORD = re.compile(r"[A-Za-z_]\w*")


@lru_cache(maxsize=2)
def source_text(source: bytes) -> str:
    """A file's bytes as the gate's text questions read them (undecodable bytes replaced): the
    engine and each rule's ``project_prefilter`` ask of one file in a row, decoded once."""
    return source.decode("utf-8", "replace")


@dataclass(frozen=True)
class Import:
    level: int  # leading dots
    module: str  # as written after the dots ("" for `from . import x`)
    names: tuple[tuple[str, str], ...] | None  # (name, bound as); None: `import module [as x]`
    bound: str = ""  # `import a.b as c`: "c"; `import a.b`: "a"


@lru_cache(maxsize=16)
def imports(text: str) -> list[Import]:
    """Every import statement of ``text``, in order (star imports as the name ``*``): at a
    line's start, or after a `;` or a compound statement's `:` in code on its line (`import os;
    import helpers`, `try: import torch`). A line continued by a backslash is read joined to the
    next: the whole text is joined only where such a line meets an import statement
    (``_imports``), as few files continue one (looking for a continued line anywhere read each
    text twice more: a third of this function's time on warp)."""
    found = _imports(text, joined="\\" not in text)
    return found if found is not None else _imports(_join_continued(" ", text), joined=True)


def _imports(text: str, joined: bool) -> list[Import] | None:
    """``imports`` of ``text``, or None where a line continued by a backslash meets an import
    statement (the line of its word is continued or continues the one before, or its
    parenthesised list holds a backslash) and ``text`` is not ``joined``: then it is read
    joined. Elsewhere a continued line changes nothing this reads (a statement is read from its
    line, or from its line to its closing bracket)."""
    found = []
    find = text.find
    starts = _StatementStarts(text, _STR_SEPARATORS)
    last_close = text.rfind(")")
    position = find("import")
    tried = -1
    while position != -1:
        start = starts(position)
        following = position + 6
        if not joined:
            line, end = starts.line, starts.end
            if text[end - 1 : end] in _CONTINUATION_ENDS and _continues(text, end, "\\", "\r"):
                return None
            if line >= 2 and text[line - 2 : line - 1] in _CONTINUATION_ENDS and _continues(text, line - 1, "\\", "\r"):
                return None
        # A statement start tried already (several `import` words after it) gives the same answer.
        match = _IMPORT.match(text, start) if start != tried else None
        tried = start
        if match is not None and match.end() > position:
            dots, module, paren, plain = match.groups()
            end = match.end()
            if paren:
                close = find(")", end) if end <= last_close else -1
                if close >= 0:
                    names, end = text[end - 1 : close + 1], close + 1
                    if not joined and "\\" in names:
                        return None  # (a backslash in the list may continue one of its lines)
                else:  # no `)`: the rest of the line, as a statement without brackets
                    rest = _REST_OF_STATEMENT.match(text, end - 1)
                    names, end = rest.group(), rest.end()
            elif dots is not None:
                rest = _REST_OF_STATEMENT.match(text, end)
                names, end = rest.group(), rest.end()
            else:
                names = None
            found.extend(_records(dots, module, names, plain))
            following = max(following, end)
        position = find("import", following)
    return found


class _StatementStarts:
    """``_statement_start`` of increasing positions in one text, each line read once (a line
    holding the word `import` thousands of times was read again for each, issue 53)."""

    def __init__(self, text, separators) -> None:
        self.text = text
        self.newline, self.semicolon, self.colon, self.not_code = separators
        self.line = self.end = self.first_cut = -1
        self.cuts: list[int] | None = None
        self.first_mark = 0

    def __call__(self, position: int) -> int:
        text = self.text
        if position >= self.end or position < self.line:
            line = self.line = text.rfind(self.newline, 0, position) + 1
            end = text.find(self.newline, position)
            end = self.end = len(text) if end < 0 else end
            self.cuts = None
            if position == line or text[line:position].isspace():
                # Only blanks before it (most imports): no separator to look for; the line's
                # are read if another statement of it asks (``first_cut`` None).
                self.first_cut = None
                return line
            # Most lines hold no `;` or `:` before their import: the separators and the quotes
            # are read only for a line that does (once: ``cuts``).
            semicolon, colon = text.find(self.semicolon, line, end), text.find(self.colon, line, end)
            first = min(semicolon, colon) if semicolon >= 0 and colon >= 0 else max(semicolon, colon)
            first_cut = self.first_cut = end if first < 0 else first
        else:
            line, first_cut = self.line, self.first_cut
            if first_cut is None:
                end = self.end
                semicolon, colon = text.find(self.semicolon, line, end), text.find(self.colon, line, end)
                first = min(semicolon, colon) if semicolon >= 0 and colon >= 0 else max(semicolon, colon)
                first_cut = self.first_cut = end if first < 0 else first
        if position <= first_cut:
            return line  # (no separator before it on its line)
        if self.cuts is None:
            end = self.end
            cuts = []
            for mark in (self.semicolon, self.colon):
                at = text.find(mark, line, end)
                while at >= 0:
                    cuts.append(at)
                    at = text.find(mark, at + 1, end)
            self.cuts = sorted(cuts)
            marks = [at for at in (text.find(mark, line, end) for mark in self.not_code) if at >= 0]
            self.first_mark = min(marks, default=end)
        index = bisect.bisect_left(self.cuts, position) - 1
        if index < 0:
            return line
        cut = self.cuts[index]
        return line if self.first_mark < cut else cut + 1


def _statement_start(text, position, separators, line: int | None = None) -> int:
    """Where the statement that may hold the word `import` at ``position`` starts: after the
    last `;` or `:` before it on its line, where nothing before that is a quote or a comment
    (the separator is code: an import statement follows only such a separator on its line);
    else the line's start (``line``, when the caller has it). ``separators``: (newline, `;`,
    `:`, (quotes and `#`)) as str or bytes."""
    newline, semicolon, colon, not_code = separators
    if line is None:
        line = text.rfind(newline, 0, position) + 1
    if position == line:
        return line  # (most imports: nothing before the word on its line)
    cut = max(text.rfind(semicolon, line, position), text.rfind(colon, line, position))
    if cut < 0:
        return line
    find = text.find
    return line if any(find(mark, line, cut) >= 0 for mark in not_code) else cut + 1


# The characters before a line's newline where a backslash may continue it (`\\`, or `\\\r`).
_CONTINUATION_ENDS = ("\\", "\r")
_STR_SEPARATORS = ("\n", ";", ":", ("'", '"', "#"))
_BYTES_SEPARATORS = (b"\n", b";", b":", (b"'", b'"', b"#"))


def first_parts(text: str) -> list[tuple[str, str]]:
    """(leading dots, first name) of the module each import statement of ``text`` names (every
    module of a plain import's list): a cheap look, for a gate, before ``imports`` reads them.
    It reads what ``imports`` reads (a line continued by a backslash is joined to the next),
    so a module ``imports`` finds has its first part here."""
    return _first_parts(text, _STR_TOKENS)


def first_parts_ascii(source: bytes) -> list[tuple[bytes, bytes]]:
    """``first_parts`` of ASCII ``source`` without decoding it (the gate asks it of every file
    that imports anything; most import nothing of their project, and are never decoded)."""
    return _first_parts(source, _BYTES_TOKENS)


def imports_any(text: str | bytes, names: frozenset, relative: Callable[[], bool] = lambda: True) -> bool:
    """``any(relative() if dots else name in names for dots, name in first_parts(text))`` (of
    ASCII bytes: ``first_parts_ascii``, ``names`` as bytes), stopping at the first such import:
    most files of a project import it first. ``relative`` is asked once, at the first relative
    import, if any."""
    return _first_parts(text, _STR_TOKENS if isinstance(text, str) else _BYTES_TOKENS, names, relative)


# A line's import head: blanks, then `from` and a blank and the first word after it (whitespace
# but the line's end between them, as ``str.split`` and ``bytes.split`` read whitespace), or
# `import`, a blank and the statement's list: matched where the statement starts, without
# cutting the line out.
_HEAD = r"[ \t]*(?:from[ \t][^\S\n]*(\S+)|import[ \t]([^\n#;]*))"
_CONTINUED = r"\\\r?\n"  # a backslash that continues a line: the two are one statement
_join_continued = re.compile(_CONTINUED).sub
_STR_TOKENS = (re.compile(_HEAD).match, "import", ".", ",", "", _join_continued, "\\", "\r", " ", "\n", _STR_SEPARATORS)
_BYTES_TOKENS = (
    re.compile(_HEAD.encode()).match, b"import", b".", b",", b"", re.compile(_CONTINUED.encode()).sub, b"\\", b"\r",
    b" ", b"\n", _BYTES_SEPARATORS,
)  # fmt: skip


def _continues(text, newline_at: int, backslash, cr) -> bool:
    """Whether the line break at ``newline_at`` follows a backslash (after a carriage return or not)."""
    before = text[newline_at - 1 : newline_at]
    return before == backslash or (before == cr and text[newline_at - 2 : newline_at - 1] == backslash)


def _first_parts(text, tokens, names=None, relative=True, joined=False):
    """Each statement with the word `import` is read from its start (``_statement_start``):
    `from <dots><name>...` or `import <name>[, <name>...]` there (a line that only mentions the
    word gives nothing; a statement that holds it twice gives its parts once). With ``names``:
    whether a part has dots (where ``relative``, a bool or a callable asked once, allows) or is
    one of them (``imports_any``). Written out for speed: the gate asks it of every file. An
    import line continued by a backslash has the file read again with such lines joined
    (``joined``), as ``imports`` reads it: the text is not joined up front, as few files
    continue an import line."""
    head, import_, dot, comma, empty, join, backslash, cr, blank, _newline, separators = tokens
    ends = (backslash, cr)
    if not joined and backslash not in text:
        joined = True  # no backslash, no continued line: joining would change nothing (one fast scan)
    found = []
    find = text.find
    starts = _StatementStarts(text, separators)
    tried = -1
    position = find(import_)
    while position != -1:
        start = starts(position)
        line = starts.line
        if not joined:
            # The line is continued, or continues the one before (`from pkg \`, `import f`).
            end = starts.end if starts.end < len(text) else -1  # the line's newline (-1: none)
            after, before = text[end - 1 : end], text[line - 2 : line - 1]  # (-1, 0: empty)
            if (after in ends and _continues(text, end, backslash, cr)) or (before in ends and _continues(text, line - 1, backslash, cr)):
                return _first_parts(join(blank, text), tokens, names, relative, joined=True)
        # A statement is read once, however many times it holds the word (a line with it thousands
        # of times was read again for each: quadratic, issue 53).
        match = head(text, start) if start != tried else None
        tried = start
        if match is not None:
            module, imported = match.groups()
            if module is not None:
                name = module.lstrip(dot)
                part = module[: len(module) - len(name)], name.split(dot, 1)[0]
                if names is None:
                    found.append(part)
                elif part[0]:
                    if relative is not True and relative is not False:
                        relative = relative()  # (once: a bool from here on)
                    if relative:
                        return True
                elif part[1] in names:
                    return True
            else:
                for item in imported.split(comma):
                    words = item.split()
                    if words:
                        part = empty, words[0].split(dot, 1)[0]
                        if names is None:
                            found.append(part)
                        elif part[1] in names:
                            return True
        position = find(import_, position + 6)
    return found if names is None else False


def attributes_read(text: str, alias: str, targets: Iterable[str]) -> list[str]:
    """The qualified names ``text`` reads through ``alias``, an import binding of ``targets``
    (`interop.to_torch(x)` with `from pkg import interop`: `pkg.interop.to_torch`): every
    dotted chain after the alias, each target put in the alias's place. `import a.b` binds `a`
    (the chain `a.b.f` is `a.b.f`), `import a.b as c` binds `c` to `a.b`."""
    chains = _chains(text, alias)
    if not chains:
        return []
    found = []
    for target in targets:
        first = target.split(".", 1)[0]
        # `import a.b` (binds `a`) and `import a.b as a` read the same: both bases are asked.
        bases = sorted({target, first}) if alias == first else [target]
        found.extend(f"{base}{chain}" for chain in chains for base in bases)
    return list(dict.fromkeys(found))


@lru_cache(maxsize=64)
def _chains(text: str, alias: str) -> tuple[str, ...]:
    """The dotted chains after each spelling of ``alias`` in ``text`` (`.to_torch`, `.convert.f`),
    sorted. A few are no read of the alias (`x.alias.f`, the module `import alias.sub` names):
    they only add names to ask about, which is the safe side for a gate."""
    # An alias whose pattern is compiled already (`wp`, `np`: most files of a root spell the same
    # few) is found by it at once: counting its spellings first read the text once more.
    pattern = _CHAIN_PATTERNS.get(alias)
    if pattern is None and text.count(alias) <= _FOUND_BY_FIND:
        found = set(_chains_found(text, alias))
    else:
        found = set((pattern or _chain_after(alias)).findall(text))
    # Most chains hold no blank (`wp.launch`, not `wp . launch`): one search of them all, joined,
    # says so, where a test of each chain was a Python step per chain of every file (warp's files
    # read a hundred `wp.<name>` each).
    joined = "\n".join(found)
    if " " in joined or "\t" in joined:
        found = {"".join(chain.split()) if " " in chain or "\t" in chain else chain for chain in found}
    return tuple(sorted(found))


# Up to how many spellings of an alias are found with str.find and one fixed pattern, rather
# than with a pattern of the alias's own: compiling one costs as much as ~100 finds (re's parser
# is Python: on warp, compiling each file's aliases was ~5% of a run), but finding thousands in
# a large text costs more.
_FOUND_BY_FIND = 64
_CHAIN = re.compile(r"(?:[ \t]*\.[ \t]*[A-Za-z_]\w*)+")


def _chains_found(text: str, alias: str):
    """``_chain_after(alias).findall(text)``, found as it finds them: each spelling of the alias
    followed by a chain, scanning on after the chain, or one character on where none follows."""
    find, match, size = text.find, _CHAIN.match, len(alias)
    at = find(alias)
    while at != -1:
        chain = match(text, at + size)
        if chain is None:
            at = find(alias, at + 1)
        else:
            yield chain.group()
            at = find(alias, chain.end())


def _chain_after(alias: str) -> re.Pattern[str]:
    found = _CHAIN_PATTERNS.get(alias)
    if found is None:
        if len(_CHAIN_PATTERNS) >= _CHAIN_PATTERNS_KEPT:
            _CHAIN_PATTERNS.clear()
        # The alias first: a pattern that opens with a literal is searched for, not tried at
        # every position of the text (a look-behind before it would be).
        found = _CHAIN_PATTERNS[alias] = re.compile(rf"{re.escape(alias)}((?:[ \t]*\.[ \t]*[A-Za-z_]\w*)+)")
    return found


# ``_chain_after``'s patterns, by alias (a dict, not a cache: ``_chains`` asks which are compiled).
_CHAIN_PATTERNS: dict[str, re.Pattern[str]] = {}
_CHAIN_PATTERNS_KEPT = 256


# `__all__ = [...]`, `__all__ += (...)`, `__all__.extend([...])`: the literal lists of names.
_ALL = re.compile(r"^__all__[ \t]*(?::[^=\n]*)?(?:\+?=[ \t]*|\.(?:extend|append)\([ \t]*)([\[(]?[^\])]*)", re.MULTILINE)
_QUOTED = re.compile(r"""['"]([A-Za-z_]\w*)['"]""")

Star = tuple[int, str, "str | None"]  # (level, module, attribute): where a name comes from


def star_names(text: str) -> tuple[dict[str, Star], frozenset[str] | None]:
    """What ``from <this module> import *`` can bind, from the module's text: name -> where it
    comes from, ``(0, "", None)`` for a name the module defines (a top-level ``def``, ``class``
    or assignment), else the import that binds it (`from .a import b as c`: `c` -> `(1, "a",
    "b")`; `import a.b as c`: `c` -> `(0, "a.b", None)`; `import a.b`: `a` -> `(0, "a", None)`);
    and the names ``__all__`` lists, or None where the text lists none (then every name not
    starting with `_` is bound). Imports anywhere in the text count, and a computed ``__all__``
    limits nothing: a name too many is only a name more to ask about."""
    found: dict[str, Star] = {}
    for record in imports(text):
        if record.names is None:
            found[record.bound] = (0, record.module if record.bound != record.module.split(".", 1)[0] else record.bound, None)
            continue
        for name, alias in record.names:
            if name != "*":
                found[alias] = (record.level, record.module, name)
    for name in definitions(text):
        found[name] = (0, "", None)
    listed = None
    if "__all__" in text:
        matches = _ALL.findall(text)
        if matches:
            listed = frozenset(name for match in matches for name in _QUOTED.findall(match))
    return found, listed


@lru_cache(maxsize=64)
def module_aliases(text: str, top: str) -> frozenset[str]:
    """The names ``text`` binds by importing a module of the package ``top`` under another name
    (`import jax.numpy as jnp`, `from jax import numpy as jp`), and uses only as that module:
    every other spelling of the name is an attribute read (`jp.array(...)`), none rebinds it.
    A name in doubt is left out (a question that drops calls through these names stays a
    superset)."""
    bound: dict[str, int] = {}
    for record in imports(text):
        if record.names is None:
            if record.bound != record.module.split(".", 1)[0] and (record.module + ".").startswith(top + "."):
                bound[record.bound] = bound.get(record.bound, 0) + 1
        elif not record.level and (record.module + ".").startswith(top + "."):
            for name, alias in record.names:
                if name != "*" and alias != name:
                    bound[alias] = bound.get(alias, 0) + 1
    found = set()
    for alias, imported in bound.items():
        end = len(alias)
        others = sum(
            1 for at in whole_word_starts(text, alias)
            # An attribute of that name (`x.jp`) is no use of it; an attribute read of it is.
            if not text.endswith(".", 0, at) and text[at + end : at + end + 16].lstrip(" \t")[:1] != "."
        )
        if others == imported:  # the imports themselves, nothing else
            found.add(alias)
    return frozenset(found)


def star_exports(text: str) -> dict[str, Star]:
    """``star_names`` of ``text`` that ``from <its module> import *`` binds: those ``__all__``
    lists, else every name not starting with `_`."""
    names, listed = star_names(text)
    return {
        name: where for name, where in names.items()
        if (name in listed if listed is not None else not name.startswith("_"))
    }


def whole_word_starts(text: str, word: str):
    """``words.word_starts`` of ``word`` that no letter, digit or underscore follows either."""
    end = len(word)
    for at in word_starts(text, word):
        after = text[at + end : at + end + 1]
        if not (after.isalnum() or after == "_"):
            yield at


@lru_cache(maxsize=4)
def words_of(text: str) -> frozenset[str]:
    """The words of ``text`` (a file's star imports ask them once per imported module)."""
    return frozenset(_WORD.findall(text))


@lru_cache(maxsize=4096)
def _records(dots: str | None, module: str | None, names: str | None, plain: str | None) -> tuple[Import, ...]:
    """The records of one import statement, from its parts as ``_IMPORT`` matched them: kept by
    their text, as the files of a root repeat the same statements (`import warp as wp`), and
    the records are frozen."""
    return tuple(_read_records(dots, module, names, plain))


def _read_records(dots: str | None, module: str | None, names: str | None, plain: str | None) -> list[Import]:
    if plain is not None:
        found = []
        for part in plain.split(","):
            words = part.split()
            if not words or not _dotted(words[0]):
                continue
            bound = words[2] if len(words) == 3 and words[1] == "as" else words[0].split(".")[0]
            found.append(Import(0, words[0], None, bound))
        return found
    listed = []
    for part in names.strip().strip("()").replace("\n", " ").split(","):
        words = part.split("#")[0].split()
        if not words:
            continue
        name = words[0]
        listed.append((name, words[2] if len(words) == 3 and words[1] == "as" else name))
    return [Import(len(dots), module, tuple(listed))] if listed else []


def _dotted(word: str) -> bool:
    return all(part.isidentifier() for part in word.split("."))


def definitions(text: str) -> dict[str, tuple[int, int]]:
    """Top-level ``def``/``class`` and assignment name -> the span of its block in ``text``
    (decorators first). A name bound twice at the top level spans from its first binding to the
    end of its last."""
    # The starts of the lines that begin in column 0 with code, found by the regex engine (a
    # literal line break first: searched, not tried at every position), not line by line.
    starts = [match.end() for match in _CODE_LINE.finditer(text)]
    if text and text[0] not in _NOT_CODE:
        starts.insert(0, 0)
    size = len(text)
    found: dict[str, tuple[int, int]] = {}
    block_start = None  # where a run of decorators began
    for index, start in enumerate(starts):
        if text.startswith("@", start):
            block_start = start if block_start is None else block_start
            continue
        match = _DEFINITION.match(text, start) or _ASSIGNMENT.match(text, start)
        if match is not None:
            end = starts[index + 1] if index + 1 < len(starts) else size
            name = match.group(1)
            begin = block_start if block_start is not None else start
            if name in found:
                begin, end = min(begin, found[name][0]), max(end, found[name][1])
            found[name] = (begin, end)
        block_start = None
    return found


def nested_definition(text: str, name: str) -> tuple[int, int] | None:
    """The span of an indented ``def``/``class``/assignment of ``name`` (a module-level binding
    inside ``try:`` or ``if``, or a method of that name: both are read), from its first line to
    the end of the last such block; None when the text has none."""
    spans = []
    for spelled in (f"def {name}", f"class {name}", name):
        position = text.find(spelled)
        while position != -1:
            start = text.rfind("\n", 0, position) + 1
            indent = text[start:position]
            end = position + len(spelled)
            if indent and not indent.strip(" \t") and _binds_here(text, end, spelled is name):
                spans.append((start, _block_end(text, start, len(indent))))
            position = text.find(spelled, end)
    if not spans:
        return None
    spans.sort()
    return spans[0][0], max(end for _start, end in spans)


def _binds_here(text: str, end: int, assignment: bool) -> bool:
    """After a ``def NAME``/``class NAME`` (``assignment``: after a bare ``NAME`` at a line's
    start), whether the name ends there and is being bound."""
    if end < len(text) and (text[end].isalnum() or text[end] == "_"):
        return False
    if not assignment:
        return True
    rest = text[end : text.find("\n", end) if "\n" in text[end:] else len(text)].lstrip(" \t")
    return rest.startswith("=") and not rest.startswith("==") or rest.startswith(":") and "=" in rest


def _block_end(text: str, start: int, indent: int) -> int:
    """Where the block whose first line starts at ``start`` (indented by ``indent``) ends: at
    the next line of code indented no deeper."""
    end = text.find("\n", start)
    while end != -1:
        following = text.find("\n", end + 1)
        line = text[end + 1 : following if following != -1 else len(text)]
        stripped = line.lstrip(" \t")
        if stripped and not stripped.startswith("#") and len(line) - len(stripped) <= indent:
            return end
        end = following
    return len(text)


@dataclass(frozen=True)
class _Module:
    """What ``Reach`` keeps of one module, whatever the question: compact, so that a large root
    costs little memory (no text is kept past a few modules)."""

    spans: dict[str, tuple[int, int]]  # top-level name -> its block's span
    bound: dict[str, list[str]]  # what its imports bind that the root holds: alias -> qualified names
    stars: tuple[str, ...]  # modules it star-imports


# Texts kept while a search walks their blocks (the most recent ones).
_TEXTS_KEPT = 8

Node = tuple[str, "str | None"]  # (module path, a name bound there, or None: the module as a whole)


class Reach:
    """Whether names imported from a root's modules lead to text a predicate accepts.

    ``text_of(path)``: a module's text ("" when unreadable); ``module_of(qualified, importer)``:
    the root's module that ``qualified`` lies in and the attribute path after it, or None
    (``analysis.project.Root.module_of``); ``absolute(importer, level, module)``: a relative
    import's absolute module. One ``Reach`` per root (the root keeps it), for every question.

    The graph: a node is a name of a module or a module as a whole. A name's block (its
    top-level ``def``, ``class`` or assignment; else an indented one, as in ``try:``) is wanted
    when the predicate accepts its text, and leads to the other names of its module it uses and
    to the names it uses that the module imports; an imported name leads where it is imported
    from, a name bound nowhere in the text to the module's star imports. A module as a whole (a
    module object used through its attributes, ``convert.to_numpy(x)``) is wanted when its
    whole text is, or (``from_file``) when a name the file reads of it leads there: a package
    imported whole re-exports what its ``__init__`` text does not hold (``attributes_read``).
    A module too long to be parsed (``max_chars``) is a dead end: what the analysis cannot read,
    the text must not promise. Everything is computed on first need, and a search that finds
    nothing settles every node it saw, so no answer depends on which question came first.
    """

    def __init__(
        self,
        text_of: Callable[[str], str],
        module_of: Callable[[str, str], tuple[str, list[str]] | None],
        absolute: Callable[[str, int, str | None], str | None],
        may_import: Callable[[str, str], bool] | None = None,
        folder_of: Callable[[str], str] | None = None,
        max_chars: int | None = None,
    ) -> None:
        self._read_text = text_of
        # A module longer than this is read as a library's (``analysis.project.MAX_PARSED_CHARS``):
        # no analysis follows a value into it, so no search goes through it either.
        self._max_chars = max_chars
        self._opaque: dict[str, bool] = {}
        self._module_of = module_of
        self._absolute = absolute
        self._may_import = may_import
        # What a qualified name resolves to depends on its importer only through this (the
        # script folder, ``modules.ModuleMap.script_folder``): the files of a folder share
        # ``_place``'s answers.
        self._folder_of = folder_of or (lambda importer: importer)
        self._texts: dict[str, str] = {}
        self._read: dict[str, _Module] = {}
        self._places: dict[tuple[str, str], Node | None] = {}
        # (base, folder) -> chain read after an alias of base -> its node (``_chain_nodes``)
        self._chains_placed: dict[tuple[str, str], dict[str, Node | None]] = {}
        # the last file's bindings
        self._file: tuple[tuple[str, str], tuple[dict[str, list[str]], tuple[str, ...]]] | None = None
        # the last file's nodes: (importer, text), what its imports bind, what it reads through them
        self._nodes: tuple[tuple[str, str], dict[str, list[Node]], dict[str, list[Node]]] | None = None
        self._star_names: dict[str, frozenset[str]] = {}  # path -> what its star import binds
        # (question, star module, folder) -> the names its star import binds that lead
        self._star_leading: dict[tuple, tuple[str, ...]] = {}
        # name node -> (its block's span, or None: bound by an import or nowhere; where it leads)
        self._blocks: dict[Node, tuple[tuple[int, int] | None, list[Node]]] = {}
        # Per question: node -> answer; path -> whether the module's text holds wanted text.
        self._answers: dict[tuple[str, bool | str], dict[Node, bool]] = {}
        self._anywhere: dict[str, dict[str, bool]] = {}
        self._reexports: dict[tuple[str, str], str | None] = {}  # ``reexport``'s answers
        self._from_counts: dict[str, Counter[str]] = {}  # path -> ``_from_imports``

    def from_file(
        self,
        key: str,
        wanted: Callable[[str], bool],
        importer: str,
        text: str,
        names: Callable[[str], bool] | None = None,
        follow: bool | str = True,
    ) -> bool:
        """Whether the file at ``importer`` (its text ``text``) imports something of the root
        that leads to text ``wanted`` accepts. ``key`` names that question; ``follow``: how far
        from a block (``_leads``); ``names``: only the imported names it accepts count (and of
        what is read through a module imported whole, only the names it accepts)."""
        answers = self._answers.get((key, follow), {})

        def leads(nodes: Iterable[Node]) -> bool:
            for node in nodes:
                # A node an earlier file's search settled needs no call.
                known = answers.get(node)
                if known or (known is None and self._leads(key, wanted, node, follow)):
                    return True
            return False

        direct = self._file_nodes(importer, text)
        for alias, nodes in direct.items():
            # A module bound whole is asked through the names read of it, below: its text
            # anywhere would answer for functions the file never calls (`from brax import math`
            # in a file that calls only `math.normalize`, with `np.asarray` elsewhere there).
            if (names is None or names(alias)) and leads(node for node in nodes if node[1] is not None):
                return True
        # Then the names read through a module imported whole, only where what the imports
        # bind leads nowhere (most files answer before: warp's files read dozens of
        # `wp.<name>` each, and placing them all costs more than the question).
        bound, stars = self.file_bindings(importer, text)
        for alias, targets in bound.items():
            if (names is None or names(alias)) and any(name is None for _path, name in direct[alias]):
                nodes = self._read_of(importer, text, alias, targets)
                if names is not None:
                    nodes = [node for node in nodes if node[1] is None or names(node[1])]
                if leads(nodes):
                    return True
        # A star import: the names of that module that lead (all of them asked once per run,
        # so that a file's text is searched only for those few), the file spelling one.
        for star in stars:
            leading = self._star_leads(key, wanted, follow, star, importer)
            if any((names is None or names(name)) and next(whole_word_starts(text, name), None) is not None for name in leading):
                return True
        return False

    def _file_nodes(self, importer: str, text: str) -> dict[str, list[Node]]:
        """The nodes each alias the file's imports bind leads to (``file_bindings``), asked by
        every question about the file."""
        key_of_file = (importer, text)
        if self._nodes is None or self._nodes[0] != key_of_file:
            bound = self.file_bindings(importer, text)[0]
            self._nodes = (key_of_file, {alias: self._placed(importer, targets) for alias, targets in bound.items()}, {})
        return self._nodes[1]

    def _read_of(self, importer: str, text: str, alias: str, targets: list[str]) -> list[Node]:
        """The nodes of the names the file reads through ``alias``, a module bound whole
        (`import pkg`, `from pkg import interop`): those whose targets the module's own text
        may not show (`pkg/__init__.py` re-exports `to_torch` from `pkg/interop.py`). Kept for
        the file's other questions."""
        self._file_nodes(importer, text)
        read = self._nodes[2]
        found = read.get(alias)
        if found is None:
            found = read[alias] = self._chain_nodes(importer, _chains(text, alias), alias, targets)
        return found

    def _chain_nodes(self, importer: str, chains: tuple[str, ...], alias: str, targets: list[str]) -> list[Node]:
        """``_placed(importer, attributes_read(text, alias, targets))`` for the ``chains`` read
        after ``alias`` in ``text``: the node each chain is after each base, kept by base and
        folder for the root's other files (600 of warp's files read `wp.<name>` each, of a few
        hundred names: each is placed once a run, not once a file)."""
        if not chains:
            return []
        folder = self._folder_of(importer)
        place, kept = self._place, self._chains_placed
        found: list[Node] = []
        pairs = 0
        for target in targets:
            first = target.split(".", 1)[0]
            # `import a.b` (binds `a`) and `import a.b as a` read the same: both bases are asked.
            bases = []
            for base in sorted({target, first}) if alias == first else (target,):
                placed = kept.get((base, folder))
                if placed is None:
                    placed = kept[(base, folder)] = {}
                bases.append((base, placed))
            pairs += len(bases)
            for chain in chains:
                for base, placed in bases:
                    node = placed.get(chain, False)
                    if node is False:
                        node = placed[chain] = place(base + chain, importer, folder)
                    if node is not None and node[0] != importer:
                        found.append(node)
        # (attributes_read's order, each node once where several bases or targets may spell it.)
        return list(dict.fromkeys(found)) if pairs > 1 else found

    def _star_leads(self, key: str, wanted: Callable[[str], bool], follow: bool | str, star: str, importer: str) -> tuple[str, ...]:
        """The names ``from <star> import *`` binds in ``importer`` that lead to wanted text."""
        where = self._place(star, importer)
        if where is None or where[1] is not None or where[0] == importer:
            return ()
        memo = (key, follow, where[0], self._folder_of(importer))
        found = self._star_leading.get(memo)
        if found is None:
            names = self._star_names.get(where[0])
            if names is None:
                # What it defines or imports from the root (a library's name leads nowhere here).
                module = self._module(where[0])
                names = frozenset(star_exports(self._text_of(where[0]))).intersection({*module.spans, *module.bound})
                self._star_names[where[0]] = names
            found = self._star_leading[memo] = tuple(
                name for name in sorted(names)
                if any(self._leads(key, wanted, node, follow) for node in self._placed(importer, [f"{star}.{name}"]))
            )
        return found

    def file_bindings(self, importer: str, text: str) -> tuple[dict[str, list[str]], tuple[str, ...]]:
        """``_bindings`` of the file at ``importer`` (its text ``text``): several questions are
        asked of one file in a row (whether it imports the project, each rule's, its check's)."""
        key_of_file = (importer, text)
        if self._file is None or self._file[0] != key_of_file:
            # ``may_import``: a cheap look at the text that shows it imports nothing of the root.
            nothing = self._may_import is not None and not self._may_import(text, importer)
            self._file = (key_of_file, ({}, ()) if nothing else self._bindings(importer, text))
        return self._file[1]

    def from_name(
        self, key: str, wanted: Callable[[str], bool], qualified: str, importer: str, follow: bool | str = True
    ) -> bool:
        """Whether ``qualified`` (a name ``importer`` reads, `pkg.interop.to_torch`) is of the
        root and leads to text ``wanted`` accepts (``follow`` as for ``_leads``)."""
        where = self._place(qualified, importer)
        return where is not None and where[0] != importer and self._leads(key, wanted, where, follow)

    def read_closure(self, starts: Iterable[str]) -> set[str]:
        """The modules reachable from ``starts`` through the imports of the modules read so far:
        every module an answer about them can have read (a search reads a module before it
        follows that module's imports, and follows nothing else)."""
        found: set[str] = set()
        pending = list(starts)
        while pending:
            path = pending.pop()
            if path in found:
                continue
            found.add(path)
            if path in self._read:
                pending.extend(self._imported(path))
        return found

    def reexport(self, path: str, name: str) -> str | None:
        """What ``name`` of the module at ``path`` is, when the module binds it only by one import
        (``from .core import f`` in a package's ``__init__``): that import's qualified name; else
        None (defined there, bound more than once, or by an indented statement)."""
        key = (path, name)
        if key in self._reexports:  # (the files that import a package ask of the same names)
            return self._reexports[key]
        found = self._reexports[key] = self._reexport(path, name)
        return found

    def _reexport(self, path: str, name: str) -> str | None:
        module = self._module(path)
        targets = module.bound.get(name)
        if name in module.spans or not targets or len(targets) != 1:
            return None
        if self._from_imports(path)[name] != 1:
            return None  # also bound by an import of a library, or twice
        return targets[0] if nested_definition(self._text_of(path), name) is None else None

    def _from_imports(self, path: str) -> Counter[str]:
        """How many times each name is bound by a `from` import of the module at ``path``
        (counted once per module: a package's `__init__` binds hundreds, each asked about)."""
        found = self._from_counts.get(path)
        if found is None:
            found = self._from_counts[path] = Counter(
                alias for record in imports(self._text_of(path)) for _n, alias in (record.names or ())
            )
        return found

    # Modules ---------------------------------------------------------------------------

    def _text_of(self, path: str) -> str:
        text = self._texts.get(path)
        if text is None:
            if len(self._texts) >= _TEXTS_KEPT:
                del self._texts[next(iter(self._texts))]
            text = self._texts[path] = self._read_text(path)
        return text

    def _module(self, path: str) -> _Module:
        found = self._read.get(path)
        if found is None:
            text = self._text_of(path)
            bound, stars = self._bindings(path, text)
            found = self._read[path] = _Module(definitions(text), bound, stars)
        return found

    def _bindings(self, importer: str, text: str) -> tuple[dict[str, list[str]], tuple[str, ...]]:
        """What the imports of ``text`` bind, alias -> qualified names, keeping only those the
        root holds (a library's names lead nowhere here), and the modules it star-imports."""
        bound: dict[str, list[str]] = {}
        stars = []
        for record in imports(text):
            if record.names is None:
                # `import a.b` binds `a` and loads `a.b`; `import a.b as c` binds `c` to `a.b`.
                bound.setdefault(record.bound, []).append(record.module)
                continue
            base = self._absolute(importer, record.level, record.module or None)
            if base is None:
                continue
            for name, alias in record.names:
                if name == "*":
                    stars.append(base)
                else:
                    bound.setdefault(alias, []).append(f"{base}.{name}")
        held = {}
        folder = self._folder_of(importer)
        for alias, targets in bound.items():
            # (``_place`` is None where ``module_of`` is: its answers are kept, by folder.)
            targets = [t for t in targets if self._place(t, importer, folder) is not None]
            if targets:
                held[alias] = targets
        return held, tuple(stars)

    def _place(self, qualified: str, importer: str, folder: str | None = None) -> Node | None:
        """The node ``qualified`` is, read from ``importer`` (whose ``folder_of`` is ``folder``,
        when the caller has it), or None outside the root."""
        key = (qualified, self._folder_of(importer) if folder is None else folder)
        found = self._places.get(key, False)
        if found is False:
            where = self._module_of(qualified, importer)
            found = self._places[key] = None if where is None else (where[0], where[1][0] if where[1] else None)
        return found

    def _placed(self, importer: str, qualified: Iterable[str]) -> list[Node]:
        folder = self._folder_of(importer)
        place = self._place
        found = []
        for name in qualified:
            where = place(name, importer, folder)
            if where is not None and where[0] != importer:
                found.append(where)
        return found

    def _block(self, node: Node) -> tuple[tuple[int, int] | None, list[Node]]:
        """The span of a name's block in its module (None: bound by an import, or nowhere the
        text shows) and the nodes it leads to."""
        found = self._blocks.get(node)
        if found is None:
            path, name = node
            module = self._module(path)
            span = module.spans.get(name)
            if span is None and name in module.bound:  # a re-export
                found = (None, self._placed(path, module.bound[name]))
            else:
                text = self._text_of(path)
                following = [] if span is not None else self._placed(path, [f"{m}.{name}" for m in module.stars])
                span = span or nested_definition(text, name)
                if span is not None:
                    words = set(_WORD.findall(text, span[0], span[1]))
                    words.discard(name)
                    following += [(path, word) for word in words if word in module.spans]
                    following += self._placed(path, [q for word in words if word in module.bound for q in module.bound[word]])
                found = (span, following)
            self._blocks[node] = found
        return found

    def _hit(self, key: str, wanted: Callable[[str], bool], node: Node) -> bool:
        """Whether ``wanted`` accepts the node's text: its block's, or the whole module's."""
        path, name = node
        anywhere = self._anywhere.setdefault(key, {})
        if path not in anywhere:
            anywhere[path] = wanted(self._text_of(path))
        if name is None or not anywhere[path]:
            return anywhere[path]
        span = self._block(node)[0]
        if span is None:
            return False
        # A predicate that reads a block within its module (the module's imports: what a name
        # called there is) says so with ``in_block``.
        in_block = getattr(wanted, "in_block", None)
        text = self._text_of(path)
        return in_block(text, span[0], span[1]) if in_block is not None else wanted(text[span[0] : span[1]])

    def _is_opaque(self, path: str) -> bool:
        """Whether the module at ``path`` is too long to be parsed (``max_chars``)."""
        if self._max_chars is None:
            return False
        found = self._opaque.get(path)
        if found is None:
            found = self._opaque[path] = len(self._text_of(path)) > self._max_chars
        return found

    def _imported(self, path: str) -> list[str]:
        module = self._module(path)
        names = [q for targets in module.bound.values() for q in targets] + list(module.stars)
        return list(dict.fromkeys(node[0] for node in self._placed(path, names)))

    def _leads(self, key: str, wanted: Callable[[str], bool], start: Node, follow: bool | str = True) -> bool:
        """Whether wanted text is reachable from ``start`` along re-exports and star imports to
        the block that binds a name, and from a block (``follow``) through all it uses, or
        (``"module"``) through the other names of its module it uses, or (False) not at all."""
        answers = self._answers.get((key, follow))
        if answers is None:
            answers = self._answers[(key, follow)] = {}
        known = answers.get(start)
        if known is not None:  # most questions: a node an earlier file's search settled
            return known

        # (A module that holds no wanted text has no block that does: ``_hit`` asks its whole
        # text first. Whether any module it imports does is not asked before the search: the
        # search reads only the modules the names lead to, that question all they import, and
        # so on: 200 of orbax's modules for one flax file, where the search reads 7.)
        def hit(node: Node) -> bool:
            return not self._is_opaque(node[0]) and self._hit(key, wanted, node)

        def edges(node: Node) -> list[Node]:
            path, name = node
            if name is None or self._is_opaque(path):
                return []
            if not follow:  # along re-exports and star imports only: no block is read
                module = self._module(path)
                if name in module.spans:
                    return []
                if name in module.bound:
                    return self._placed(path, module.bound[name])
                return self._placed(path, [f"{m}.{name}" for m in module.stars])
            span, following = self._block(node)
            if span is None or follow is True:
                return following
            # "module": what the block uses of its own module only (a helper's helper beside it).
            return [other for other in following if other[0] == path]

        return self._search(answers, start, hit, edges)

    @staticmethod
    def _search(answers: dict, start, hit, edges) -> bool:
        """Whether a node ``hit`` accepts is reachable from ``start`` along ``edges``: a search
        of all it reaches, so the answer never depends on which question came first; one that
        finds nothing settles every node it saw (all they reach was seen too)."""
        known = answers.get(start)
        if known is not None:
            return known
        seen: dict = {start: None}  # node -> the node it was reached from
        pending = [start]
        while pending:
            node = pending.pop()
            known = answers.get(node)
            if known is False:
                continue
            if known is True or hit(node):
                # Every node on the way here reaches it too: later questions from them are settled.
                while node is not None:
                    answers[node] = True
                    node = seen[node]
                return True
            for other in edges(node):
                if other not in seen:
                    seen[other] = node
                    pending.append(other)
        for node in seen:
            answers[node] = False
        return False
