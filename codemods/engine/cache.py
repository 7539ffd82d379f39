"""A content-hash cache of per-file results: a repeat run over an unchanged tree parses nothing.

An entry's key hashes the file's bytes and path with a fingerprint of everything else that can
change a result: the tool's own code and version, the Python and libcst versions (the parsers),
the selected rules with their options, and the fix policy. So the cache never changes a result;
it only skips recomputing one.

Only files that pass some rule's byte prefilter go through the cache: for the others the
engine's answer (no findings) is already cheaper than a cache lookup.

Entries are JSON, never pickle (a cache directory may come from an untrusted checkout), and are
written to a temporary file that is then renamed into place, so a concurrent run sees a whole
entry or none. An unreadable or damaged entry is a miss; a cache that cannot be written is
silently skipped (it is an optimisation, never a reason to fail a run).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import sys
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path

import jax_codemod
from jax_codemod.engine.pipeline import FileResult, Settings, process_source
from jax_codemod.rule import Finding, FixSafety, Span

ENV_VAR = "CODEMOD_CACHE_DIR"
DEFAULT_DIR_NAME = ".codemod_cache"
# Bump when the entry layout changes; old entries then simply miss.
FORMAT = "1"
_TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# This directory is a cache made by codemod.\n"


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """A hash of the tool's own sources, so editing a rule invalidates without a version bump."""
    digest = hashlib.sha256(f"{jax_codemod.__version__}\0{sys.version}\0{_version('libcst')}".encode())
    package = Path(jax_codemod.__file__).resolve().parent
    for source in sorted(package.rglob("*.py")):
        digest.update(source.relative_to(package).as_posix().encode() + b"\0")
        digest.update(source.read_bytes())
    return digest.hexdigest()


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "unknown"


def settings_fingerprint(settings: Settings) -> str:
    rules = [[type(rule).__module__, type(rule).__qualname__, rule.CODE, rule.options] for rule in settings.rules]
    document = {"code": code_fingerprint(), "rules": rules, "unsafe_fixes": settings.unsafe_fixes}
    return hashlib.sha256(json.dumps(document, sort_keys=True, default=repr).encode()).hexdigest()


def default_directory(config_path: str | None) -> str:
    """``$CODEMOD_CACHE_DIR``, else ``.codemod_cache`` beside the governing pyproject.toml, else in cwd."""
    if os.environ.get(ENV_VAR):
        return os.environ[ENV_VAR]
    base = os.path.dirname(os.path.abspath(config_path)) if config_path else os.getcwd()
    return os.path.join(base, DEFAULT_DIR_NAME)


@dataclass(frozen=True)
class Cache:
    directory: str
    fingerprint: str

    @classmethod
    def open(cls, directory: str, settings: Settings) -> Cache:
        return cls(os.path.abspath(directory), settings_fingerprint(settings))

    def process(self, source: bytes, path: str, settings: Settings) -> FileResult:
        """``process_source``, answered from the cache when this exact input was seen before."""
        if not any(rule.prefilter(source) for rule in settings.rules):
            return process_source(source, path, settings)
        key = self.key(source, path)
        cached = self.load(key, source, path)
        if cached is not None:
            return cached
        result = process_source(source, path, settings)
        if result.error is None:
            self.store(key, result)
        return result

    def key(self, source: bytes, path: str) -> str:
        digest = hashlib.sha256(self.fingerprint.encode())
        # The path is part of the key so no rule can see a result computed for another file.
        digest.update(b"\0" + os.path.normpath(path).encode("utf-8", "surrogateescape") + b"\0")
        digest.update(source)
        return digest.hexdigest()

    def _entry(self, key: str) -> str:
        return os.path.join(self.directory, FORMAT, key[:2], key[2:] + ".json")

    def load(self, key: str, source: bytes, path: str) -> FileResult | None:
        try:
            with open(self._entry(key), "rb") as handle:
                document = json.loads(handle.read())
            findings = [_finding(item, path) for item in document["findings"]]
            fixed = base64.b64decode(document["fixed"]) if document["fixed"] is not None else None
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return FileResult(path=path, findings=findings, source=source, fixed=fixed)

    def store(self, key: str, result: FileResult) -> None:
        document = {
            "findings": [_finding_json(finding) for finding in result.findings],
            "fixed": base64.b64encode(result.fixed).decode("ascii") if result.fixed is not None else None,
        }
        target = self._entry(key)
        try:
            self._prepare(os.path.dirname(target))
            fd, temporary = tempfile.mkstemp(prefix=".", suffix=".tmp", dir=os.path.dirname(target))
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    json.dump(document, handle)
                os.replace(temporary, target)
            except BaseException:
                os.unlink(temporary)
                raise
        except OSError:
            pass

    def _prepare(self, entry_dir: str) -> None:
        if os.path.isdir(entry_dir):
            return
        os.makedirs(entry_dir, exist_ok=True)
        # Keep the cache out of git and out of backups, as ruff and pytest do.
        for name, content in (("CACHEDIR.TAG", _TAG), (".gitignore", "# Created by codemod.\n*\n")):
            marker = os.path.join(self.directory, name)
            if not os.path.exists(marker):
                with open(marker, "w", encoding="utf-8") as handle:
                    handle.write(content)


def _finding_json(finding: Finding) -> dict:
    span = finding.span
    return {
        "code": finding.code,
        "name": finding.name,
        "line": finding.line,
        "column": finding.column,
        "message": finding.message,
        "fix": finding.fix.value,
        "span": [span.start_line, span.start_column, span.end_line, span.end_column],
        "node_type": finding.node_type,
        "applied": finding.applied,
        "resolved_by": finding.resolved_by,
    }


def _finding(item: dict, path: str) -> Finding:
    # ``data`` is scratch space for the rule's rewrite, which a cached result never needs.
    return Finding(
        code=item["code"],
        name=item["name"],
        path=path,
        line=item["line"],
        column=item["column"],
        message=item["message"],
        fix=FixSafety(item["fix"]),
        span=Span(*item["span"]),
        node_type=item["node_type"],
        applied=item["applied"],
        resolved_by=item.get("resolved_by"),
    )
