"""The engine: source in, findings and fixed source out. It never prints.

The pipeline per file is ordered by cost: a byte-level prefilter per rule (a file no
rule can match is never parsed), detection on the standard library's ``ast``, and
libcst only for files that get a fix. Fixes are applied one rule at a time and the
file is re-checked after each, until nothing fixable is left.
"""

from __future__ import annotations

import ast
import difflib
import gc
import io
import re
import tokenize
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import cache
from typing import TYPE_CHECKING

from jax_codemod.analysis.context import FileContext
from jax_codemod.rule import Finding, FixSafety, Rule, Span

if TYPE_CHECKING:
    import libcst as cst

MAX_FIX_PASSES = 8
# A file past this size that reaches the parser is reported, not parsed: ast needs ~140
# bytes of memory per source byte and libcst far more, so one generated 20 MB module
# would take minutes and gigabytes. The largest file in torch, jax or numpy is 1.4 MB.
MAX_PARSE_BYTES = 4 * 2**20


@dataclass(frozen=True)
class FileError:
    path: str
    message: str
    line: int | None = None

    def to_json(self) -> dict:
        return {"path": self.path, "line": self.line, "message": self.message}

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.message}"


@dataclass
class FileResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    source: bytes | None = None
    fixed: bytes | None = None
    error: FileError | None = None

    @property
    def changed(self) -> bool:
        return self.fixed is not None and self.fixed != self.source

    def diff(self, display_path: str | None = None) -> str:
        if not self.changed:
            return ""
        name = display_path or self.path
        return unified_diff(self.source, self.fixed, name)


class SourceTooLarge(Exception):
    def __init__(self, size: int) -> None:
        super().__init__(
            f"not checked: {size / 2**20:.1f} MiB is over the {MAX_PARSE_BYTES // 2**20} MiB limit for one file"
        )


class FixError(Exception):
    """A fix could not be completed; the file is left as it was."""


def decode(source: bytes) -> str:
    encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
    return source.decode(encoding)


def unified_diff(before: bytes, after: bytes, name: str) -> str:
    """A unified diff that ``git apply`` and ``patch -p1`` accept, exact to the byte.

    Lines end at LF only, as in git (a CR or form feed is part of its line), and bytes that
    are not UTF-8 (a latin-1 file) come back as surrogate escapes: encoding the diff with
    ``errors="surrogateescape"`` gives the patch's exact bytes.
    """
    name = name.lstrip("/")  # absolute paths become root-relative, as `patch -p1` expects
    out: list[bytes] = []
    names = (f"a/{name}".encode("utf-8", "surrogateescape"), f"b/{name}".encode("utf-8", "surrogateescape"))
    for line in difflib.diff_bytes(difflib.unified_diff, _lf_lines(before), _lf_lines(after), *names):
        out.append(line)
        if not line.endswith(b"\n"):
            out.append(b"\n\\ No newline at end of file\n")
    return b"".join(out).decode("utf-8", "surrogateescape")


def _lf_lines(data: bytes) -> list[bytes]:
    return _LF_LINE.findall(data)


_LF_LINE = re.compile(rb"[^\n]*\n|[^\n]+\Z")


@dataclass(frozen=True)
class Settings:
    """The rule set and fix policy for one run."""

    rules: tuple[Rule, ...]
    unsafe_fixes: bool = False

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


def check_source(source: bytes, path: str, rules: Sequence[Rule]) -> tuple[FileContext | None, list[Finding]]:
    """Findings of ``rules`` in ``source``; raises SyntaxError/ValueError for unparsable input.

    The caller keeps the tree alive through the returned context, so collection is left to
    it (``process_source`` pauses it for the whole file).
    """
    active = [rule for rule in rules if rule.prefilter(source)]
    if not active:
        return None, []
    return _check_active(source, path, active)


def _check_active(source: bytes, path: str, active: list[Rule]) -> tuple[FileContext, list[Finding]]:
    if len(source) > MAX_PARSE_BYTES:
        raise SourceTooLarge(len(source))
    text = decode(source)
    with warnings.catch_warnings():
        # SyntaxWarnings (invalid escapes, ...) belong to the user's linter, not to our output.
        warnings.simplefilter("ignore")
        tree = ast.parse(source, filename=path)
    ctx = FileContext(path, text, tree)
    if _made_contexts:
        _made_contexts[-1].append(ctx)
    findings = [
        finding
        for rule in active
        for finding in rule.check(ctx)
        if not ctx.is_suppressed(finding.code, finding.line)
    ]
    return ctx, findings


def process_source(source: bytes, path: str, settings: Settings) -> FileResult:
    """Check ``source`` and compute its fixed form. Pure: reads and writes nothing."""
    made: list[FileContext] = []
    _made_contexts.append(made)
    with _gc_paused():
        try:
            return _process_source(source, path, settings)
        finally:
            # Before the collection pass: a released context's tree is freed by reference counting.
            _made_contexts.pop()
            for ctx in made:
                ctx.release()


# The contexts each process_source in progress has made (fix passes make more than one).
_made_contexts: list[list[FileContext]] = []


def _process_source(source: bytes, path: str, settings: Settings) -> FileResult:
    result = FileResult(path=path, source=source)
    try:
        ctx, findings = check_source(source, path, settings.rules)
    except SyntaxError as error:
        result.error = FileError(path, f"cannot parse: {error.msg}", error.lineno)
        return result
    except (ValueError, UnicodeDecodeError, LookupError) as error:
        result.error = FileError(path, f"cannot read as Python source: {error}")
        return result
    except (RecursionError, MemoryError):
        result.error = FileError(path, "cannot parse: nested too deeply or too large")
        return result
    except SourceTooLarge as error:
        result.error = FileError(path, str(error))
        return result
    except Exception as error:  # noqa: BLE001 -- a rule's check() bug must cost one file, never the run
        result.error = FileError(path, f"internal error while checking: {type(error).__name__}: {error}")
        return result
    if ctx is None:
        return result
    findings.sort(key=lambda f: (f.line, f.column, f.code))
    if not any(settings.applies(finding) for finding in findings):
        result.findings = findings
        return result
    try:
        result.fixed, extra = _fix(source, ctx, findings, settings)
    except FixError as error:
        result.findings = findings
        result.error = FileError(path, f"fix not applied: {error}")
        return result
    applied = [replace(f, applied=settings.applies(f)) for f in findings] + extra
    result.findings = sorted(applied, key=lambda f: (f.line, f.column, f.code))
    return result


def _fix(source: bytes, ctx: FileContext, findings: list[Finding], settings: Settings):
    """Apply fixes rule by rule until no fixable finding is left; return (bytes, extra findings)."""
    import libcst as cst  # only files that get a fix pay for importing libcst

    current = source
    module = None  # libcst's parse of ``current``, kept from the check that validated it
    original_keys = {_key(f, ctx) for f in findings}
    extra: list[Finding] = []
    for pass_number in range(MAX_FIX_PASSES):
        fixable = [f for f in findings if settings.applies(f)]
        if not fixable:
            return current, extra
        if pass_number:
            extra.extend(replace(f, applied=True) for f in fixable if _key(f, ctx) not in original_keys)
        rule = next(r for r in settings.rules if any(f.code == r.CODE for f in fixable))
        targets = [f for f in fixable if f.code == rule.CODE]
        try:
            module = module or cst.parse_module(current)
            new = _apply_rule(module, rule, targets, ctx).bytes
        except FixError:
            raise
        except Exception as error:  # a rule bug must cost one file, never the run
            raise FixError(f"{rule.CODE} failed: {type(error).__name__}: {error}") from error
        if new == current:
            raise FixError(f"{rule.CODE} reported a fix but changed nothing")
        try:
            ctx, findings = check_source(new, ctx.path, settings.rules)
            module = cst.parse_module(new)
        except Exception as error:
            raise FixError(f"{rule.CODE} produced code that does not parse: {error}") from error
        current = new
    raise FixError(f"fixes did not converge after {MAX_FIX_PASSES} passes")


def _key(finding: Finding, ctx: FileContext) -> tuple:
    """Identifies a finding across passes: an earlier fix may shift lines, not their text."""
    line = ctx.lines[finding.line - 1].strip() if finding.line <= len(ctx.lines) else ""
    return (finding.code, finding.message, line)


@cache
def _anchored_rewrite_class():
    """Defined on first use so that a run without fixes never imports libcst's codemod machinery."""
    import libcst as cst
    from libcst.metadata import PositionProvider

    class AnchoredRewrite(cst.CSTTransformer):
        """Hands the rule each node that a finding anchors, matched by type and exact span."""

        METADATA_DEPENDENCIES = (PositionProvider,)

        def __init__(self, rule: Rule, targets: list[Finding], fixer) -> None:
            super().__init__()
            self.rule = rule
            self.fixer = fixer
            self.pending = {(f.node_type, f.span): f for f in targets}

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


def _apply_rule(module: cst.Module, rule: Rule, targets: list[Finding], ctx: FileContext) -> cst.Module:
    from jax_codemod.engine.fixer import Fixer
    from libcst.metadata import MetadataWrapper

    fixer = Fixer(ctx)
    rewrite = _anchored_rewrite_class()(rule, targets, fixer)
    new_module = MetadataWrapper(module, unsafe_skip_copy=True).visit(rewrite)
    if rewrite.pending:
        node_type, span = min(rewrite.pending, key=lambda key: (key[1].start_line, key[1].start_column))
        raise FixError(f"{rule.CODE}: no {node_type} at line {span.start_line}, column {span.start_column + 1}")
    new_module = rule.finalize(new_module, fixer)
    return fixer.finish(new_module)
