"""The engine: source in, findings and fixed source out. It never prints.

The pipeline per file is ordered by cost: a byte-level prefilter per rule (a file no
rule can match is never parsed), detection on the standard library's ``ast``, and
libcst only for files that get a fix. Fixes are applied one rule at a time and the
file is re-checked after each, until nothing fixable is left.
"""

from __future__ import annotations

import ast
import bisect
import gc
import io
import os
import re
import sys
import tokenize
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import cache, lru_cache, wraps
from typing import TYPE_CHECKING

from jax_codemod.analysis import pieces
from jax_codemod.analysis.context import FileContext
from jax_codemod.analysis.module_text import source_text
from jax_codemod.engine import interrupts, project
from jax_codemod.engine.results import (  # noqa: F401 -- the engine's results, re-exported where they were
    FileError,
    FileResult,
    diff_header,
    quote_path,
    unified_diff,
)
from jax_codemod.engine.splice import line_opcodes, only_own_edits
from jax_codemod.engine.syntax import NeedsNewerPython, NestingTooDeep, check_nesting, parse_cst
from jax_codemod.rule import Finding, FixSafety, Prefilter, Rule, Span

if TYPE_CHECKING:
    import libcst as cst

MAX_FIX_PASSES = 8
# A file past this size that reaches the parser is reported, not parsed: ast needs ~140
# bytes of memory per source byte and libcst far more, so one generated 20 MB module
# would take minutes and gigabytes. The largest file in torch, jax or numpy is 1.4 MB.
MAX_PARSE_BYTES = 4 * 2**20
# The budget of a fix: libcst, which every fix needs, costs ~20 s of CPU and ~0.7 GB per MiB
# of source per pass (measured: 0.67 MiB took 13.5 s and 0.4 GB, 1.3 MiB 27 s and 1 GB, a file
# just under 4 MiB 204 s and 3.7 GB). A larger file keeps its findings, reported with the reason
# its fix was not applied, so that no single file can cost minutes and gigabytes.
MAX_FIX_BYTES = 1 * 2**20
# And a CPU-time budget for one file's fix, for the code below the size limit that is still slow
# (deeply nested expressions, huge literals): past it the fix is abandoned, the file untouched.
MAX_FIX_SECONDS = 60
# The budget of one file's analysis (parse and every rule's check), so that no input can make a
# run spend minutes or gigabytes on one file: CPU seconds, and memory (resident, over what the
# process held when the file started; sampled every ANALYSIS_SAMPLE_SECONDS of CPU, where the
# platform tells: Linux). Past either the file is reported as not checked. Real files take far
# less: the slowest of jax, torch and numpy takes ~2 s and ~0.3 GB. A pyproject.toml (which
# may come with the code) can only lower them; the command line can set any value.
MAX_ANALYSIS_SECONDS = 60
MAX_ANALYSIS_MIB = 2048
ANALYSIS_SAMPLE_SECONDS = 0.1


class SourceTooLarge(Exception):
    def __init__(self, size: int) -> None:
        super().__init__(
            f"not checked: {size / 2**20:.1f} MiB is over the {MAX_PARSE_BYTES // 2**20} MiB limit for one file"
        )


class FixError(Exception):
    """A fix could not be completed; the file is left as it was."""


def describe(error: BaseException, kind: bool = True) -> str:
    """``Type: message`` of an exception, safe to format: a message made from a deeply nested
    node (libcst puts nodes in its exceptions) raises RecursionError when formatted."""
    name = f"{type(error).__name__}: " if kind else ""
    try:
        message = str(error)
    except Exception:  # noqa: BLE001 -- the message itself failed: the type must do
        return type(error).__name__
    return name + (message if len(message) <= 500 else message[:500] + "...")


def decode(source: bytes) -> str:
    encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
    return source.decode(encoding)




@dataclass(frozen=True)
class Settings:
    """The rule set and fix policy for one run."""

    rules: tuple[Rule, ...]
    unsafe_fixes: bool = False
    # The analysis budget of one file (MAX_ANALYSIS_*); 0: none. Results within it do not depend
    # on it, so it is not part of the cache's fingerprint (a file past it is never cached).
    analysis_seconds: float = MAX_ANALYSIS_SECONDS
    analysis_mib: int = MAX_ANALYSIS_MIB

    def applies(self, finding: Finding) -> bool:
        if finding.fix is FixSafety.SAFE:
            return True
        return finding.fix is FixSafety.UNSAFE and self.unsafe_fixes


@contextmanager
def _gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while one file is parsed, checked and fixed.

    ``ast.parse`` and the rules allocate hundreds of thousands of objects per file, which
    set off collections that walk the whole live tree again and again: a third of the
    CPU of a check over jax+torch+numpy. The tree is acyclic and freed by reference
    counting; a young-generation pass afterwards picks up any cycles a rule left. That
    pass must run after the tree is freed: every object allocated while collection was
    off is young, so collecting with the tree still alive walks all of it (6% of a cold
    run's CPU on JAX-heavy code). Hence the pause wraps ``process_source``, whose frame,
    and with it the file's tree, is gone when the pass runs.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect(0)


@lru_cache(maxsize=64)
def prefilter_for(rules: tuple[Rule, ...]) -> Prefilter:
    """The combined prefilter of a rule set (``rule.Prefilter``), built once per set."""
    return Prefilter(rules)


def active_rules(source: bytes, rules: Sequence[Rule]) -> tuple[Rule, ...]:
    """The rules whose prefilter passes ``source``, in order: the only ones worth parsing it for."""
    rules = tuple(rules)
    try:
        prefilter = prefilter_for(rules)
    except TypeError:  # a rule that cannot be hashed (a dataclass with eq): no memo
        prefilter = Prefilter(rules)
    found = prefilter.active(source)
    if len(found) == len(rules) or (source.isascii() and not _CODING.match(source)):
        return found  # the fast path: ASCII bytes in the default encoding are what Python reads
    seen = _as_python_reads(source)
    if seen is None or seen == source:
        return found
    more = set(map(id, prefilter.active(seen)))
    if not more:
        return found
    more.update(map(id, found))
    return tuple(rule for rule in rules if id(rule) in more)


# A coding declaration (PEP 263) on line 1 or 2: bytes in another encoding (utf-7 spells `j` as
# `+AGo-`) can hide a trigger although every byte is ASCII.
_CODING = re.compile(rb"(?:[^\r\n]*(?:\r\n|\r|\n))?[ \t\f]*#[^\r\n]*?coding[:=]")


def _as_python_reads(source: bytes) -> bytes | None:
    """``source`` as Python reads its names: decoded, and NFKC-normalised (PEP 3131: ``ｊａｘ`` is
    ``jax``), as UTF-8; None when it cannot be decoded (the parse reports that file).

    The whole text is normalised, strings and comments too: a prefilter only says which files
    are worth parsing, so passing more of them costs time, never a finding.
    """
    import unicodedata

    try:
        text = decode(source)
    except (SyntaxError, UnicodeDecodeError, LookupError, ValueError):
        return None
    return unicodedata.normalize("NFKC", text).encode("utf-8", "surrogatepass")


def check_source(
    source: bytes, path: str, rules: Sequence[Rule], active: Sequence[Rule] | None = None
) -> tuple[FileContext | None, list[Finding]]:
    """Findings of ``rules`` in ``source``; raises SyntaxError/ValueError for unparsable input.

    ``active``: the rules whose prefilter passes exactly this ``source``, when the caller
    already asked (``active_rules``); else they are computed here.
    The caller keeps the tree alive through the returned context, so collection is left to
    it (``process_source`` pauses it for the whole file).
    """
    if active is None:
        active = file_active_rules(path, source, rules)
    if not active:
        return None, []
    return _check_active(source, path, list(active))


def _check_active(source: bytes, path: str, active: list[Rule]) -> tuple[FileContext, list[Finding]]:
    if len(source) > MAX_PARSE_BYTES:
        raise SourceTooLarge(len(source))
    text = decode(source)
    # Parsed when a rule first reads ctx.tree (JAX001 can often decide from a few blocks);
    # a parse error raised there reaches process_source like one raised here.
    ctx = FileContext(path, text, parse=lambda: _parse(source, text, path))
    view = project.view_for(path)
    if view is not None:
        ctx.project = ctx.owned_project = view
        ctx.root_path = view.path
        if _made_views:
            _made_views[-1].append(view)
    if _made_contexts:
        _made_contexts[-1].append(ctx)
    findings = [
        settled
        for rule in check_order(active)
        for finding in rule.check(ctx)
        if not ctx.is_suppressed(finding.code, finding.line)
        and (settled := _settle_expected(ctx, rule, finding)) is not None
    ]
    return ctx, findings


_IN_EXPECTED_BLOCK = "; no automatic fix inside a block that expects an error"


def _settle_expected(ctx: FileContext, rule: Rule, finding: Finding) -> Finding | None:
    """``finding``, unless a test expects the error it names (None); in a block that expects
    another error, reported without a fix: an edit there changes what the test asserts."""
    from jax_codemod.analysis.expected_errors import EXPECTED, INSIDE, expected_errors_of

    verdict = expected_errors_of(ctx).judge(
        (finding.span.start_line, finding.span.start_column), finding.raises, getattr(rule, "TRACE_ONLY", False)
    )
    if verdict == EXPECTED:
        return None
    if verdict == INSIDE and finding.fix is not FixSafety.NONE:
        return replace(finding, fix=FixSafety.NONE, message=finding.message + _IN_EXPECTED_BLOCK, data=())
    return finding


def check_order(active: Sequence[Rule]) -> list[Rule]:
    """``active`` in the order their checks run: the rules that read parts of a file
    (``Rule.PARTS``) last, so that they use the whole tree when another rule parsed it.
    (Findings are sorted by position afterwards: the order changes no output.)"""
    return sorted(active, key=lambda rule: rule.PARTS is not None)


def _parse(source: bytes, text: str, path: str) -> ast.Module:
    try:
        with warnings.catch_warnings():
            # SyntaxWarnings (invalid escapes, ...) belong to the user's linter, not to our output.
            warnings.simplefilter("ignore")
            # In pieces where the file is large: the peak memory of a run is its largest parse's.
            return pieces.parse(source, path)
    except (RecursionError, MemoryError):
        # CPython's parser refuses deep nesting by these (a MemoryError means its stack, not the
        # machine's memory, ran out): reported with the line where the nesting check finds it.
        check_nesting(source, path)
        raise NestingTooDeep("not checked: nesting too deep or too complex for Python's parser", (path, None, 0, None))
    except SyntaxError as error:
        if "\x00" in text:
            # No Python parses a NUL byte (libcst does, so masking would blame the Python version).
            line = len(re.findall(r"\r\n|\r|\n", text[: text.index("\x00")])) + 1
            raise SyntaxError("source contains a NUL byte (no Python version accepts one)",
                              (path, line, None, None)) from None
        # Perhaps valid Python of a newer version than this interpreter's (engine/syntax.py).
        from jax_codemod.engine.syntax import parse_newer

        return parse_newer(text, path, error)


def process_source(
    source: bytes, path: str, settings: Settings, active: Sequence[Rule] | None = None, *, text_depends: bool = False
) -> FileResult:
    """Check ``source`` and compute its fixed form. Pure: reads and writes nothing.

    ``active``: ``file_active_rules(path, source, settings.rules)`` when the caller has it already.
    A notebook (``.ipynb``) is checked as the module of its code cells (``engine/notebook.py``).
    ``text_depends``: the result's ``depends`` also names the modules that the answers read from
    the texts alone may rest on (``View.text_depends``), for a result cache.
    """
    if path.endswith(".ipynb"):
        return _process_notebook(source, path, settings)
    return _process_python(source, path, settings, active, text_depends)


def _process_notebook(source: bytes, path: str, settings: Settings) -> FileResult:
    """A notebook's result. Reading it (JSON, masks) and writing its fix back run in the file's
    analysis budget as its analysis does, and whatever any stage raises is this file's error,
    never the run's (issue 53: a `"\\ud800"` escape, a comment spelling a marker ended it)."""
    from jax_codemod.engine import notebook

    owned = not _budget_depth  # else an enclosing budget is the one that ran out: its owner says so
    try:
        return notebook.process_notebook(source, path, settings, _process_python, lambda: _stage_budget(settings))
    except AnalysisBudgetExceeded as exceeded:
        if not owned:
            raise
        return FileResult(path=path, source=source, error=FileError(path, _budget_message(exceeded)))
    except RecursionError:
        return FileResult(path=path, source=source, error=FileError(path, "not checked: nesting too deep"))
    except MemoryError:
        return FileResult(path=path, source=source, error=FileError(path, "not checked: out of memory"))
    except Exception as error:  # noqa: BLE001 -- one notebook's failure must cost that file, never the run
        interrupts.raise_if_requested()
        return FileResult(path=path, source=source,
                          error=FileError(path, f"internal error while reading the notebook: {describe(error)}"))


def _stage_budget(settings: Settings | None):
    """The file's analysis budget, for a stage that is not the analysis (the project gate,
    reading and writing a notebook): each is bounded as the analysis is."""
    if settings is None:
        return _budget(MAX_ANALYSIS_SECONDS, MAX_ANALYSIS_MIB, AnalysisBudgetExceeded)
    return _budget(settings.analysis_seconds, settings.analysis_mib, AnalysisBudgetExceeded)


def _budget_message(exceeded: BaseException) -> str:
    return (f"not checked: analysis budget exceeded ({exceeded.args[0]}; "
            "--analysis-budget-seconds and --analysis-budget-mib set it)")


def _narrowed(settings: Settings | None, narrow: Callable[[], tuple[Rule, ...] | None], rules) -> tuple[Rule, ...]:
    """``narrow()``, the rules a gate leaves a file, within the file's budget; every rule where
    the gate fails or runs past the budget: a gate only narrows, so asking every rule is always
    right, and the analysis (in its own budget) then says what the file holds. Within another
    budget (the analysis asks the gate too), that budget's alarm is its owner's to answer: a
    one-shot alarm swallowed here would leave the rest of the analysis unbounded."""
    owned = not _budget_depth
    try:
        with _stage_budget(settings):
            narrowed = narrow()
    except AnalysisBudgetExceeded:
        if not owned:
            raise
        return tuple(rules)
    except Exception:  # noqa: BLE001 -- a gate's failure must cost nothing but its narrowing
        interrupts.raise_if_requested()
        return tuple(rules)
    return tuple(rules) if narrowed is None else narrowed


# ``project_active``'s signature: (path, source, rules, active) -> the rules to check with.
ProjectGate = Callable[[str, bytes, Sequence[Rule], tuple[Rule, ...]], tuple[Rule, ...]]


def file_active_rules(
    path: str, source: bytes, rules: Sequence[Rule], gate: ProjectGate | None = None, settings: Settings | None = None
) -> tuple[Rule, ...]:
    """``active_rules`` of what the rules see in the file: a notebook's code, not its JSON (where a
    trigger's quote or backslash is escaped). A Python file's is widened by ``project_active``,
    or by ``gate`` (a result cache's, which keeps its answers) when the file needs asking.
    The notebook's reading and the project gate (an import scan of the file, its root's
    modules) run in the file's budget (``settings``'; the default without), and past it or on
    any error they narrow nothing (issue 53: a scan that was quadratic ran outside the budget)."""
    if path.endswith(".ipynb"):
        from jax_codemod.engine import notebook

        def notebook_rules() -> tuple[Rule, ...] | None:
            code = notebook.prefilter_code(source)
            if code is None:
                return None
            active = active_rules(code, rules)
            # Its cells' calls into the modules beside it are asked about as a script's are.
            if not needs_project_gate(code, rules, active) or not _may_import_its_root(path, code):
                return active
            return (gate or project_active)(path, code, rules, active)

        return _narrowed(settings, notebook_rules, rules)
    active = active_rules(source, rules)
    if not needs_project_gate(source, rules, active) or not _may_import_its_root(path, source):
        return active
    return _narrowed(settings, lambda: (gate or project_active)(path, source, rules, active), rules)


def _may_import_its_root(path: str, source: bytes) -> bool:
    """Whether the file's import lines may name a module of its root (``Root.may_import``, which
    ``project_active`` asks first, answered again from its last scan): most files that import
    anything import only libraries (JAX's own tree: 930 of 960), and are told so here, before
    the budget's timer and memory sampler are set up for them (~20 us a file). The scan is one
    pass over the import lines, linear in the file's size, as the prefilter's is; on any error
    the gate, in its budget, decides."""
    try:
        place = project.root_for(path)
        return place is not None and place[0].may_import(source, place[1])
    except AnalysisBudgetExceeded:
        raise  # the analysis's own budget (it asks the gate too): its owner's to answer
    except Exception:  # noqa: BLE001 -- the gate itself, in its budget, answers
        interrupts.raise_if_requested()
        return True


def needs_project_gate(source: bytes, rules: Sequence[Rule], active: tuple[Rule, ...]) -> bool:
    """Whether a rule with a ``project_prefilter`` failed the file's prefilter, and the file
    imports something (so might import from its project): else the gate has nothing to ask."""
    return (
        len(active) != len(rules)
        and b"import" in source
        and any(rule.PROJECT_PREFILTER and rule not in active for rule in rules)
    )


def project_active(path: str, source: bytes, rules: Sequence[Rule], active: tuple[Rule, ...]) -> tuple[Rule, ...]:
    """``active`` and the rules whose ``project_prefilter`` passes a file their prefilter failed:
    one that calls into another module of its project (issue 34). Asked where
    ``needs_project_gate`` holds (``file_active_rules``, a cache's ``gate``)."""
    waiting = [rule for rule in rules if rule.PROJECT_PREFILTER and rule not in active]
    # No rule is asked (nor imported) about a file that imports nothing of its project: most
    # files, told from their import lines before a view of the root is made.
    place = project.root_for(path)
    if place is None or not place[0].may_import(source, place[1]):
        return active
    waiting = _may_pass_all(waiting, source, place[0])
    if not waiting:
        return active
    view = project.view_for(path)
    if view is None or not view.imports_project(source_text(source)):
        return active
    more = {id(rule) for rule in waiting if rule.project_prefilter(source, view)}
    if not more:
        return active
    more.update(map(id, active))
    return tuple(rule for rule in rules if id(rule) in more)


def _may_pass_all(waiting: list[Rule], source: bytes, root) -> list[Rule]:
    """The rules of ``waiting`` whose ``project_prefilter`` can pass the file (bytes ``source``)
    of ``root``: a rule that says what its gate needs (``project_needs``: words the file or some
    module of its root must hold, as JAX002's needs export text somewhere) is not asked where none
    holds one. The root is searched once a run, for every rule's words in one pass over its
    modules (``Root.holds_each``: a root without JAX, black or libcst, holds none, and a pass per
    rule read each module once per rule); once the root is known to hold a rule's words, the
    file's bytes are not searched for them (warp: ~26 searches of each of 570 files)."""
    passing, unknown = [], []
    for rule in waiting:
        needs = getattr(rule, "project_needs", None)
        words = needs() if needs is not None else None
        if words is None or root.known_to_hold(words):
            passing.append(rule)
        elif not any(word in source for word in words):
            unknown.append((rule, words))
        else:
            passing.append(rule)
    if unknown:
        held = root.holds_each(tuple(words for _rule, words in unknown))
        passing += [rule for (rule, _words), holds in zip(unknown, held) if holds]
    return [rule for rule in waiting if rule in passing]


def _process_python(
    source: bytes, path: str, settings: Settings, active: Sequence[Rule] | None = None, text_depends: bool = False
) -> FileResult:
    made: list[FileContext] = []
    views: list = []
    _made_contexts.append(made)
    _made_views.append(views)
    with _gc_paused():
        try:
            result = _process_source(source, path, settings, active)
            for view in views:
                result.depends.update(view.reads)
            if text_depends:
                for view in views:
                    for module, digest in view.text_depends().items():
                        result.depends.setdefault(module, digest)
                for view in views:
                    result.depends.update(view.absent())
            return result
        finally:
            # Before the collection pass: a released context's tree is freed by reference counting.
            _made_contexts.pop()
            _made_views.pop()
            for ctx in made:
                ctx.release()


# The contexts each process_source in progress has made (fix passes make more than one).
_made_contexts: list[list[FileContext]] = []
# The views of those contexts, whose reads (``View.reads``, ``View.text_depends``) make the
# result's ``depends``.
_made_views: list[list] = []


def _process_source(source: bytes, path: str, settings: Settings, active: Sequence[Rule] | None) -> FileResult:
    result = FileResult(path=path, source=source)
    try:
        with _budget(settings.analysis_seconds, settings.analysis_mib, AnalysisBudgetExceeded):
            ctx, findings = check_source(source, path, settings.rules, active)
    except AnalysisBudgetExceeded as exceeded:
        result.error = FileError(path, _budget_message(exceeded))
        return result
    except (NeedsNewerPython, NestingTooDeep) as error:
        result.error = FileError(path, error.msg, error.lineno)
        return result
    except SyntaxError as error:
        text = error.text.rstrip("\r\n") if isinstance(error.text, str) else None
        result.error = FileError(path, f"cannot parse: {error.msg}", error.lineno, error.offset or None, text)
        return result
    except (ValueError, UnicodeDecodeError, LookupError) as error:
        result.error = FileError(path, f"cannot read as Python source: {error}")
        return result
    except RecursionError:
        # ast, or a walk of its tree, past Python's recursion limit: the file nests too deeply.
        result.error = FileError(path, f"not checked: nesting too deep (Python's recursion limit, {sys.getrecursionlimit()})")
        return result
    except MemoryError:
        result.error = FileError(path, "not checked: out of memory (the file is too large or complex)")
        return result
    except SourceTooLarge as error:
        result.error = FileError(path, str(error))
        return result
    except Exception as error:  # noqa: BLE001 -- a rule's check() bug must cost one file, never the run
        interrupts.raise_if_requested()  # an interrupt something swallowed, failing the check
        result.error = FileError(path, f"internal error while checking: {describe(error)}")
        return result
    if ctx is None:
        return result
    findings.sort(key=lambda f: (f.line, f.column, f.code))
    unfinished = _not_fully_checked(ctx, path)
    if unfinished is not None:
        # Silence there is no proof, and a fix judged on a partial answer is no safe one:
        # reported, not fixed, and never counted clean (the error fails --check).
        result.findings = [replace(f, fix=FixSafety.NONE) if f.fix is not FixSafety.NONE else f for f in findings]
        result.error = unfinished
        return result
    if not any(settings.applies(finding) for finding in findings):
        result.findings = findings
        return result
    try:
        result.fixed, reported = _fix(source, ctx, findings, settings)
    except FixError as error:
        interrupts.raise_if_requested()
        # No fix for them in this run: no `[*]`, no "fixable with --unsafe-fixes" (the error says why).
        result.findings = [replace(f, fix=FixSafety.NONE) if f.fix is not FixSafety.NONE else f for f in findings]
        result.error = FileError(path, f"fix not applied: {error}")
        return result
    result.findings = sorted(reported, key=lambda f: (f.line, f.column, f.code))
    return result


def _not_fully_checked(ctx: FileContext, path: str) -> FileError | None:
    """The error for a file whose value analysis gave up past its budget somewhere (a chain of
    thousands of reassignments: ``analysis.values.MAX_ROUNDS``), or None. Read only where a rule
    built the analysis."""
    analysis = ctx.__dict__.get("analysis")
    unfinished = analysis.unfinished if analysis is not None else ()
    if not unfinished:
        return None
    first = unfinished[0]
    where = f"in `{first.function}`" if first.function else "at module level"
    more = f" (and {len(unfinished) - 1} more)" if len(unfinished) > 1 else ""
    return FileError(
        path,
        f"not fully checked: the value analysis gave up {where}{more}, past its budget; "
        "a finding there may be missing",
        first.line,
    )


@dataclass
class _Tracked:
    """One finding across fix passes: as first seen, and what became of it."""

    finding: Finding
    ctx: FileContext
    applied: bool = False
    resolved_by: str | None = None


def _fix(source: bytes, ctx: FileContext, findings: list[Finding], settings: Settings):
    """Apply fixes rule by rule until no fixable finding is left; return (bytes, findings to report).

    The fixed source is checked again after every pass, so a finding that only appears
    after another rule's fix (an export inside a line JAX005 rewrites) is reported in the
    same run, fixed when its own rule can. A finding is ``applied`` only when its own rule
    made the edit; one that disappears after another rule's pass is ``resolved_by`` it.
    """

    current = source
    module = None  # libcst's parse of ``current``, kept from the check that validated it
    baseline = None  # libcst's printout of the unchanged source: what is not the fixes' doing
    tracked = [_Tracked(finding, ctx) for finding in findings]
    live = list(zip(tracked, findings))  # the current source's findings, with their history
    for _ in range(MAX_FIX_PASSES):
        fixable = [(entry, f) for entry, f in live if settings.applies(f)]
        if not fixable:
            return current, [_reported(entry) for entry in tracked], baseline
        rule = next(r for r in settings.rules if any(f.code == r.CODE for _, f in fixable))
        targets = [f for _, f in fixable if f.code == rule.CODE]
        try:
            if module is None:
                module = parse_cst(current, ctx.path)
                baseline = baseline if baseline is not None else module.bytes
            new = _apply_rule(module, rule, targets, ctx).bytes
        except FixError:
            raise
        except NestingTooDeep as error:
            raise FixError(f"{error.msg.removeprefix('not checked: ')} at line {error.lineno}") from None
        except RecursionError:
            # libcst's visitors recurse per node, and Python's recursion limit stops them first.
            raise FixError(f"nesting too deep for libcst's visitors (Python's recursion limit, "
                           f"{sys.getrecursionlimit()})") from None
        except Exception as error:  # a rule bug must cost one file, never the run
            raise FixError(f"{rule.CODE} failed: {describe(error)}") from error
        if new == current:
            raise FixError(f"{rule.CODE} reported a fix but changed nothing")
        for entry, finding in fixable:
            if finding.code == rule.CODE:
                entry.applied = True
        try:
            new_ctx, new_findings = check_source(new, ctx.path, settings.rules)
            module = parse_cst(new, ctx.path)
        except Exception as error:
            raise FixError(f"{rule.CODE} produced code that does not parse: {describe(error, False)}") from error
        new_findings.sort(key=lambda f: (f.line, f.column, f.code))
        links = _match(live, ctx, new_findings, new_ctx)
        still_there = {id(entry) for entry in links if entry is not None}
        for entry, _ in live:
            if id(entry) not in still_there and not entry.applied and entry.resolved_by is None:
                entry.resolved_by = rule.CODE
        live = []
        at_original_line = None
        for entry, finding in zip(links, new_findings, strict=True):
            if entry is None:
                # Reported where the user's file has it, not where the partly fixed text does
                # (the two texts compared once per pass, not once per finding).
                at_original_line = at_original_line or _at_original_line(source, new)
                entry = _Tracked(at_original_line(finding), new_ctx)
                tracked.append(entry)
            live.append((entry, finding))
        ctx = new_ctx or ctx
        current = new
    raise FixError(f"fixes did not converge after {MAX_FIX_PASSES} passes")


def _at_original_line(original: bytes, current: bytes) -> Callable[[Finding], Finding]:
    """What moves a finding of ``current`` (a fixed version of ``original``) to the line of
    ``original`` it comes from: the same line where the edits left it, else the line at the same
    offset in the original code an edit replaced there (its last line, when the edit added lines)."""
    before = original.splitlines()
    opcodes = line_opcodes(before, current.splitlines())
    ends = [j2 for _tag, _i1, _i2, _j1, j2 in opcodes]

    def moved(finding: Finding) -> Finding:
        index = finding.line - 1
        at = bisect.bisect_right(ends, index)
        if at == len(opcodes):
            return finding
        tag, i1, i2, j1, _j2 = opcodes[at]
        if index < j1:
            return finding
        offset = index - j1 if tag == "equal" else min(index - j1, max(i2 - i1 - 1, 0))
        line = min(i1 + offset, max(len(before) - 1, 0)) + 1
        shift = line - finding.line
        span = finding.span
        moved_span = replace(span, start_line=span.start_line + shift, end_line=max(span.end_line + shift, line))
        return replace(finding, line=line, span=moved_span)

    return moved


def _reported(entry: _Tracked) -> Finding:
    resolved_by = None if entry.applied else entry.resolved_by
    return replace(entry.finding, applied=entry.applied, resolved_by=resolved_by)


def _match(live, ctx: FileContext, new: list[Finding], new_ctx) -> list:
    """For each new finding, the live finding it continues (None: it is new).

    The same code, message and line text first; then the same code and message, since
    another rule's edit may have changed the rest of the line.
    """
    links: list = [None] * len(new)
    taken: set[int] = set()
    for strict in (True, False):
        for index, finding in enumerate(new):
            if links[index] is not None:
                continue
            wanted = _key(finding, new_ctx) if strict else (finding.code, _comparable(finding.message))
            candidates = [
                (entry, previous)
                for entry, previous in live
                if id(entry) not in taken
                # A fixed finding only continues as itself: never by its message alone.
                and (strict or not entry.applied)
                and (_key(previous, ctx) if strict else (previous.code, _comparable(previous.message))) == wanted
            ]
            if candidates:
                entry, _ = min(candidates, key=lambda pair: abs(pair[1].line - finding.line))
                links[index] = entry
                taken.add(id(entry))
    return links


def _key(finding: Finding, ctx: FileContext | None) -> tuple:
    """Identifies a finding across passes: an earlier fix may shift lines, not their text."""
    lines = ctx.lines if ctx is not None else []
    line = lines[finding.line - 1].strip() if finding.line <= len(lines) else ""
    return (finding.code, _comparable(finding.message), line)


_LINE_REFERENCE = re.compile(r"\bline \d+")


def _comparable(message: str) -> str:
    """A message without the line numbers it cites (`only feeds f (line 12)`), which an earlier
    pass's inserted helper or `try` shifts: the same finding, not a new one."""
    return _LINE_REFERENCE.sub("line", message)


@cache
def _anchored_rewrite_class():
    """Defined on first use so that a run without fixes never imports libcst's codemod machinery."""
    import libcst as cst
    from libcst.metadata import PositionProvider

    class AnchoredRewrite(cst.CSTTransformer):
        """Hands the rule each node that a finding anchors, matched by type and exact span."""

        METADATA_DEPENDENCIES = (PositionProvider,)

        def __init__(self, rule: Rule, targets: list[Finding], fixer, lines: list[str]) -> None:
            super().__init__()
            self.rule = rule
            self.fixer = fixer
            self.pending = {(f.node_type, _libcst_span(f.span, lines)): f for f in targets}

        def on_leave(self, original_node, updated_node):
            position = self.get_metadata(PositionProvider, original_node, None)
            if position is None:
                return updated_node
            span = Span(position.start.line, position.start.column, position.end.line, position.end.column)
            finding = self.pending.pop((type(original_node).__name__, span), None)
            if finding is None:
                return updated_node
            return self.rule.rewrite(original_node, updated_node, finding, self.fixer)

    return AnchoredRewrite


def _libcst_span(span: Span, lines: list[str]) -> Span:
    """``span`` (``ast``'s columns) as libcst's positions give it: libcst drops the form feeds of a
    line's indentation, so its columns on such a line are short by their count."""
    def column(line: int, at: int) -> int:
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        indent = text[: len(text) - len(text.lstrip(" \t\x0c"))]
        return at - indent.count("\x0c") if "\x0c" in indent and at >= len(indent) else at

    if not any("\x0c" in lines[n - 1] for n in {span.start_line, span.end_line} if 0 < n <= len(lines)):
        return span
    return Span(span.start_line, column(span.start_line, span.start_column),
                span.end_line, column(span.end_line, span.end_column))


def _apply_rule(module: cst.Module, rule: Rule, targets: list[Finding], ctx: FileContext) -> cst.Module:
    from jax_codemod.engine.fixer import Fixer
    from libcst.metadata import MetadataWrapper

    fixer = Fixer(ctx)
    rewrite = _anchored_rewrite_class()(rule, targets, fixer, ctx.lines)
    new_module = MetadataWrapper(module, unsafe_skip_copy=True).visit(rewrite)
    if rewrite.pending:
        node_type, span = min(rewrite.pending, key=lambda key: (key[1].start_line, key[1].start_column))
        raise FixError(f"{rule.CODE}: no {node_type} at line {span.start_line}, column {span.start_column + 1}")
    new_module = rule.finalize(new_module, fixer)
    return fixer.finish(new_module)


# The budget of a fix ------------------------------------------------------------------------


class FixBudgetExceeded(BaseException):
    """Raised by the CPU-time alarm; a BaseException so no rule's ``except Exception`` eats it."""


class AnalysisBudgetExceeded(BaseException):
    """The analysis of one file went past its budget (the reason is the argument)."""


def _resident_bytes() -> int | None:
    """This process's resident memory now (Linux), or None where it cannot be read cheaply."""
    try:
        with open("/proc/self/statm", "rb") as handle:
            return int(handle.read().split()[1]) * _PAGE_SIZE
    except (OSError, ValueError, IndexError):
        return None


try:
    _PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")
except (AttributeError, ValueError, OSError):
    _PAGE_SIZE = 4096


_budget_depth = 0  # budgets open in this process's main thread


@contextmanager
def _budget(seconds: float, mib: int, exceeded: type[BaseException]) -> Iterator[None]:
    """Raise ``exceeded`` in this thread once the process has used ``seconds`` more CPU, or
    holds ``mib`` MiB more resident memory than now (each 0: no limit).

    Only where a timer can be had: the main thread of a process with SIGVTALRM (each worker
    of the pool runs files in its main thread); memory only where it can be read (Linux).
    Elsewhere the size limits alone bound the work. The alarm interrupts Python code between
    bytecodes: one native call (``ast.parse`` of a 4 MiB file) runs to its end first.
    """
    import signal
    import time

    global _budget_depth
    if _budget_depth:
        yield  # within another stage's budget, which already bounds this one (one timer at a time)
        return
    timer = getattr(signal, "ITIMER_VIRTUAL", None)
    baseline = _resident_bytes() if mib > 0 else None
    limit_bytes = mib * 2**20 if baseline is not None else 0
    if timer is None or (seconds <= 0 and not limit_bytes):
        yield
        return
    started = time.process_time()

    def sample(_signum, _frame):
        if seconds > 0 and time.process_time() - started >= seconds:
            raise exceeded(f"over {seconds:g} s of CPU")
        if limit_bytes:
            resident = _resident_bytes()
            if resident is not None and resident - baseline > limit_bytes:
                raise exceeded(f"over {mib} MiB of memory")

    try:
        previous = signal.signal(signal.SIGVTALRM, sample)
    except ValueError:  # not the main thread
        yield
        return
    if limit_bytes:
        first = min(seconds, ANALYSIS_SAMPLE_SECONDS) if seconds > 0 else ANALYSIS_SAMPLE_SECONDS
        signal.setitimer(timer, first, ANALYSIS_SAMPLE_SECONDS)
    else:
        signal.setitimer(timer, seconds)
    _budget_depth += 1
    try:
        yield
    finally:
        signal.setitimer(timer, 0)
        signal.signal(signal.SIGVTALRM, previous)
        _budget_depth -= 1


def verify_fix(result: FileResult, settings: Settings) -> str | None:
    """Why ``result.fixed`` must not be written, or None: the checks a fresh fix passes.

    It changes the file, it fixes some finding, it parses (ast and libcst), and it converged:
    checking it again finds nothing left to fix under ``settings``.
    """
    source, fixed = result.source, result.fixed
    if fixed is None or source is None or fixed == source:
        return "the fix changes nothing"
    if result.path.endswith(".ipynb"):
        from jax_codemod.engine import notebook

        # A notebook's code cells are what must parse and be fixed. (The module of a notebook's
        # cells, checked under the notebook's name, is no notebook: it is checked as Python.)
        if notebook.prefilter_code(source) is not None:
            fixed = notebook.prefilter_code(fixed)
            if fixed is None:
                return "the fixed notebook cannot be read back"
    if not any(finding.applied for finding in result.findings):
        return "no finding is fixed by it"
    if len(fixed) > MAX_PARSE_BYTES:
        return "the fixed file is over the size limit"
    try:
        _ctx, findings = check_source(fixed, result.path, settings.rules)
        parse_cst(fixed, result.path)
    except Exception as error:  # noqa: BLE001 -- any failure means: do not write it
        return f"the fixed code does not parse: {describe(error)}"
    if any(settings.applies(finding) for finding in findings):
        return "the fixed code still has findings to fix"
    return None


def _within_budget(fix):
    """``fix`` bounded in size and CPU time, its output with the file's own line endings.

    Past either budget the fix is declined with the reason (FixError): the findings are
    reported and the file is left as it was. Bytes changed after the fix loop validated them
    (line endings) are validated again.
    """

    @wraps(fix)
    def bounded(source: bytes, ctx: FileContext, findings: list[Finding], settings: Settings):
        if len(source) > MAX_FIX_BYTES:
            raise FixError(
                f"{len(source) / 2**20:.1f} MiB is over the {MAX_FIX_BYTES // 2**20} MiB limit "
                "for files that get a fix (fix it by hand or split the file)"
            )
        try:
            # The fix's CPU budget, and the same memory budget as the file's analysis.
            with _budget(MAX_FIX_SECONDS, settings.analysis_mib, FixBudgetExceeded):
                fixed, reported, baseline = fix(source, ctx, findings, settings)
        except FixBudgetExceeded as exceeded:
            raise FixError(f"it took {exceeded.args[0]} (fix it by hand)") from None
        kept = _keep_line_endings(source, only_own_edits(source, baseline, fixed))
        if kept != fixed:
            applied = [replace(finding, applied=True) for finding in findings]
            problem = verify_fix(FileResult(ctx.path, applied, source, kept), settings)
            if problem is not None:
                raise FixError(problem)
        return kept, reported

    return bounded


def _keep_line_endings(source: bytes, fixed: bytes) -> bytes:
    """The fixed file ends its lines the way the original did.

    libcst drops a final line ending that is a lone CR (``x = 1\\r`` prints as ``x = 1``),
    and code a rule inserts (helpers, imports) may end its lines in LF. A file whose lines
    all end alike (CRLF only, or CR only) gets that ending on every line again: Python reads
    every ending as the same newline, inside strings too, so the code means the same.
    """
    if source.endswith(b"\r") and fixed and not fixed.endswith((b"\r", b"\n")):
        fixed += b"\r"
    crlf = source.count(b"\r\n")
    cr, lf = source.count(b"\r") - crlf, source.count(b"\n") - crlf
    ending = b"\r\n" if crlf and not cr and not lf else b"\r" if cr and not crlf and not lf else None
    if ending is not None:
        fixed = _ANY_ENDING.sub(ending, fixed)
    return fixed


_ANY_ENDING = re.compile(rb"\r\n|\r|\n")


# Defined last so that the fix loop above stays the fix loop; process_source calls the bounded one.
_fix = _within_budget(_fix)
