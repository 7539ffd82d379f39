"""JAX007: a JAX version string compared as a string, not as a version."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from jax_codemod.analysis.context import FileContext, statements_holding
from jax_codemod.analysis.module_text import whole_word_starts
from jax_codemod.analysis.scopes import BODY_FIELDS, child_fields, walk_values
from jax_codemod.analysis.version_gates import (
    SLICE,
    SPLIT,
    SPLIT_INDEX,
    SPLIT_SLICE,
    VERSION_STRINGS,
    WHOLE,
    StringVersionCompare,
    may_compare_as_strings,
    string_compared_versions,
)
from jax_codemod.analysis.words import lines_of, occurrences
from jax_codemod.rule import Finding, FixSafety, Rule

if TYPE_CHECKING:
    import libcst as cst

# The tuple of ints each library has on every supported release (0.4.30 to the newest):
# `jax.__version_info__` (jax/version.py) and `jaxlib.version.__version_info__`.
VERSION_INFO = {"jax": "jax.__version_info__", "jaxlib": "jaxlib.version.__version_info__"}
_PLACEHOLDER = "\x00VERSION\x00"
_SPELLED = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
# A release of the example that string order gets wrong, for the message.
_WRONG_ON = "0.10.2"


class StringComparedJaxVersion(Rule):
    """## What it does
    Finds JAX's version string (`jax.__version__`, `jax.version.__version__`,
    `jaxlib.__version__`, `jaxlib.version.__version__`, `jax.lib.__version__`) compared as a
    string: ordered against a string (`jax.__version__ >= "0.7"`), sliced and compared
    (`jax.__version__[:3] == "0.4"`), or split and its parts ordered as strings
    (`jax.__version__.split(".")[1] >= "7"`, `jax.__version__.split(".")[:2] >= ["0", "7"]`).
    The JAX analogue of flake8-2020's `sys.version` rules. The fix compares the version as a
    tuple of ints, `jax.__version_info__` (`jaxlib.version.__version_info__`), which every
    supported release has.

    ## Why is this bad?
    Strings compare character by character: `"0.10.2" >= "0.7"` is False, `"0.10.2"[:3]` is
    `"0.1"`, and `"10" >= "7"` is False. Since JAX 0.10 such a gate takes the wrong branch:
    code meant for old releases runs on new ones (and calls APIs they removed), or the new
    code path never runs. The version-gate analysis of the other rules reads such a gate the
    way Python computes it on the target JAX, so a legacy branch it leaves live is reported.

    ## Example
    ```python
    import jax

    if jax.__version__ >= "0.7":
        export = jax.numpy.from_dlpack
    ```

    ## Use instead
    ```python
    import jax

    if jax.__version_info__ >= (0, 7, 0):
        export = jax.numpy.from_dlpack
    ```

    ## Fix safety
    Unsafe: the fixed comparison gives the answer the code means, which on the releases the
    string comparison got wrong (0.10 and later, for most gates) is the other branch than
    before, code the program never ran there. A whole string compared with a version literal
    becomes a tuple compared with the literal's numbers padded to three (`"0.7"` is
    `(0, 7, 0)`, so `<=` and `>` mean what they do for versions); a prefix slice `[:k]`
    compared with `"X.Y"` becomes `__version_info__[:2]` compared with `(X, Y)`; a split
    part becomes the same part of the tuple, its literal an int. A literal that is not a
    dotted release of digits (`"0.4.30rc1"`), a chained comparison, or a comparison spread
    over several lines is reported without a fix.
    """

    CODE = "JAX007"
    NAME = "string-compared-jax-version"
    DEFAULT_ENABLED = True
    FIX_SAFETY = FixSafety.UNSAFE
    TRIGGERS = (b"__version__",)
    REQUIRES = (b"jax",)

    def check(self, ctx: FileContext) -> list[Finding]:
        if not ctx.has_tree and not _may_compare(ctx):
            return []  # shown from the blocks that spell a version, without the whole parse
        findings = []
        for node in _comparisons(ctx):
            found = string_compared_versions(ctx.qualname, node)
            if found:  # one finding per comparison, chained ones too
                findings.append(self._finding(ctx, found[0]))
        return findings

    def _finding(self, ctx: FileContext, found: StringVersionCompare) -> Finding:
        compare = found.compare
        shown = " ".join(ctx.source_of(compare).split())
        try:
            wrong = found.on(_WRONG_ON)
            example = f" (on {found.library} {_WRONG_ON} it is {wrong})"
        except (IndexError, TypeError, ValueError):
            example = ""
        message = f"`{shown}` compares {found.library}'s version as strings, character by character{example}"
        replacement = _replacement(ctx, found)
        info = VERSION_INFO[found.library]
        if replacement is None:
            return self.finding(
                ctx, compare, f"{message}; compare `{info}`, a tuple of ints, instead", FixSafety.NONE,
                node_type="Comparison",
            )
        return self.finding(
            ctx,
            compare,
            f"{message}; compare `{info}`, a tuple of ints: `{replacement.replace(_PLACEHOLDER, info)}`",
            FixSafety.UNSAFE,
            node_type="Comparison",
            data=(replacement, info),
        )

    def rewrite(self, original, updated: cst.Comparison, finding: Finding, fixer):
        import libcst as cst

        template, info = finding.data
        reference = fixer.reference_code(info)
        replaced = cst.parse_expression(template.replace(_PLACEHOLDER, reference))
        return replaced.with_changes(lpar=updated.lpar, rpar=updated.rpar)


def _may_compare(ctx: FileContext) -> bool:
    """``version_gates.may_compare_as_strings``; True (read the file whole) should it fail in a
    way it should not: that costs a whole parse, never a finding."""
    try:
        return may_compare_as_strings(ctx)
    except Exception:  # noqa: BLE001 -- the whole-file check below raises what is really wrong
        return True


def _comparisons(ctx: FileContext) -> list[ast.Compare]:
    """The file's comparisons that may compare a version string, in no set order: those of the
    statements on a line that spells one, each statement's own expressions walked (the
    statements it holds are looked at in turn). A version string is a name or attribute chain
    that ``ctx.qualname`` resolves into ``VERSION_STRINGS``: one that spells `__version__`, or a
    name the module binds to one (``from jax import __version__ as v``, ``V = jax.__version__``,
    a star import's). Most files that name `__version__` compare it once, if at all, among
    thousands of other comparisons (warp's context.py): the lines of every `<`, `>`, `==` and
    `!=` cost more than the rest of the check. With a lone carriage return (lines the text does
    not count as the parser does), every node is looked at."""
    text = ctx.text
    if "\r" in text:
        return [node for node in ctx.analysis.nodes if node.__class__ is ast.Compare]
    starts = occurrences(text, "__version__")
    for name, target in ctx._bindings.items():
        if target in VERSION_STRINGS and "__version__" not in name:
            starts += whole_word_starts(text, name)
    lines = sorted(lines_of(text, sorted(starts)))
    compares = []
    for statement in statements_holding(ctx.tree.body, lines):
        for name in child_fields(statement.__class__):
            if name in BODY_FIELDS:
                continue  # statements: the walk above looks at those that hold a line
            value = getattr(statement, name, None)
            for part in value if value.__class__ is list else (value,):
                if isinstance(part, ast.AST):
                    compares.extend(node for node in walk_values(part) if node.__class__ is ast.Compare)
    return compares


def _replacement(ctx: FileContext, found: StringVersionCompare) -> str | None:
    """The fixed comparison's source, the version tuple spelled as ``_PLACEHOLDER``; None when no
    fix is certain."""
    compare = found.compare
    if len(compare.ops) != 1 or compare.lineno != compare.end_lineno:
        return None
    numbers = _numbers(found)
    if numbers is None:
        return None
    if found.form == WHOLE:
        numbers = numbers + (0,) * (3 - len(numbers))
        side = _PLACEHOLDER
    elif found.form == SLICE:
        side = f"{_PLACEHOLDER}[:{len(numbers)}]"
    elif found.form == SPLIT_INDEX:
        side = f"{_PLACEHOLDER}[{found.index}]"
    elif found.form == SPLIT_SLICE:
        side = f"{_PLACEHOLDER}[:{found.index}]"
    elif found.form == SPLIT:
        side = _PLACEHOLDER
    else:
        return None
    literal = str(numbers[0]) if found.form == SPLIT_INDEX else _tuple(numbers)
    left, right = (side, literal) if found.version_left else (literal, side)
    return f"{left} {_SPELLED[type(found.op)]} {right}"


def _numbers(found: StringVersionCompare) -> tuple[int, ...] | None:
    value = ast.literal_eval(found.other)
    if found.form == SPLIT_INDEX:
        return (int(value),) if value.isdigit() else None
    if found.form in (SPLIT_SLICE, SPLIT):
        parts = list(value)
        if found.form == SPLIT_SLICE and len(parts) != found.index:
            return None  # `split(".")[:2] >= ["0"]`: not a release of that many parts
    else:
        parts = value.split(".")
        if found.form == SLICE and len(value) != found.index:
            return None  # `[:3] == "0.4"` is meant; `[:4] == "0.4"` is not a prefix test
    if not parts or not all(part.isdigit() for part in parts):
        return None
    return tuple(int(part) for part in parts)


def _tuple(numbers: tuple[int, ...]) -> str:
    return f"({numbers[0]},)" if len(numbers) == 1 else f"({', '.join(str(n) for n in numbers)})"
