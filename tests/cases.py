"""The snapshot cases under tests/snapshots/, and what their headers declare.

Each ``tests/snapshots/<rule module>/<kind>_<name>.py`` is one case of that rule:

- ``rewrite_*``: the rule fixes it (safe fixes only);
- ``unsafe_*``: the rule fixes it only with ``--unsafe-fixes``;
- ``report_*``: the rule reports it and leaves it byte-identical;
- ``noop_*``: correct code, no finding, byte-identical.

Header comments configure a case:
``# expect: ErrorType: message fragment`` (the error the *before* code raises when run),
``# requires: gpu`` / ``# requires: cupy`` (what executing it needs; ``dlpack-platform``: the case
asserts what only a platform with DLPack exports does, such as zero-copy, and skips on a TPU),
``# requires: jax>=0.6.1`` (the case cannot run at all on other releases -- its setup needs an
API they lack: the execution test skips it, with the reason; any installed distribution and
the operators >=, >, <=, <, == work),
``# fails-on: jax>=0.7.0`` (the releases on which the *before* code raises the documented error;
several such lines are alternatives, the items of one line all hold;
on any other release the before code is not held to that error -- it may run, or fail for a
reason of its own, such as an API that release lacks -- while the after code must run on
every release: a fix has to work on the oldest JAX the project allows, not only where the
old code broke),
``# option: key=value`` (a rule option, as in ``[tool.codemod]``),
``# execute: yes`` (a no-op case that is also run, and must run without error).
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import jax_codemod

SNAPSHOT_DIR = Path(__file__).parent / "snapshots"
KINDS = ("rewrite", "unsafe", "report", "noop")
_VERSION_REQUIREMENT = re.compile(r"^([A-Za-z0-9_.-]+)\s*(>=|<=|==|>|<)\s*([0-9][0-9A-Za-z.]*)$")
_COMPARE = {">=": operator.ge, "<=": operator.le, "==": operator.eq, ">": operator.gt, "<": operator.lt}
_HEADER = re.compile(r"^#\s*(expect|requires|fails-on|option|execute):\s*(.+?)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Case:
    path: Path

    @property
    def id(self) -> str:
        return f"{self.path.parent.name}-{self.path.stem}"

    @property
    def kind(self) -> str:
        return self.path.stem.split("_", 1)[0]

    @cached_property
    def source(self) -> bytes:
        return self.path.read_bytes()

    @cached_property
    def rule(self) -> type[jax_codemod.Rule]:
        module = self.path.parent.name
        for rule in jax_codemod.RULES:
            if rule.__module__ == f"jax_codemod.rules.{module}":
                return rule
        raise LookupError(f"no rule lives in codemods/rules/{module}.py")

    @cached_property
    def headers(self) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        text = self.source.decode("utf-8", errors="replace")
        for key, value in _HEADER.findall(text):
            found.setdefault(key, []).append(value)
        return found

    @property
    def options(self) -> dict[str, str]:
        return dict(item.split("=", 1) for item in self.headers.get("option", []))

    @property
    def expected_error(self) -> tuple[str, str] | None:
        expect = self.headers.get("expect")
        if not expect:
            return None
        error_type, _, fragment = expect[0].partition(":")
        return error_type.strip(), fragment.strip()

    @property
    def requires(self) -> set[str]:
        """What executing the case needs, version requirements (``jax>=0.7.0``) excepted."""
        return {item for item in self._requirements if not _VERSION_REQUIREMENT.match(item)}

    @property
    def version_requirements(self) -> list[tuple[str, str, str]]:
        """(distribution, operator, version) of every ``# requires: dist>=X.Y.Z``."""
        return [_VERSION_REQUIREMENT.match(item).groups() for item in self._requirements
                if _VERSION_REQUIREMENT.match(item)]

    def unmet_version_requirement(self) -> str | None:
        """Why the installed distributions cannot run this case at all, or None."""
        return _unmet(self.version_requirements)

    @property
    def fails_on(self) -> list[list[tuple[str, str, str]]]:
        """The ``# fails-on:`` lines, each a list of (distribution, operator, version): the items of
        one line must all hold, and any one line may (``# fails-on: jax<0.5`` and
        ``# fails-on: jax>=0.10`` for an old code that breaks at both ends)."""
        lines = []
        for value in self.headers.get("fails-on", []):
            items = [_VERSION_REQUIREMENT.match(item.strip()) for item in value.split(",")]
            lines.append([match.groups() for match in items if match])
        return lines

    def fails_here(self) -> bool:
        """Whether the installed distributions are ones on which the before code fails as documented."""
        return not self.fails_on or any(_unmet(line) is None for line in self.fails_on)

    @property
    def _requirements(self) -> list[str]:
        return [item.strip() for value in self.headers.get("requires", []) for item in value.split(",")
                if item.strip()]


def _unmet(requirements) -> str | None:
    """Why the installed distributions do not meet ``requirements``, or None."""
    from importlib import metadata

    from jax_codemod.analysis.jax_versions import parse

    for name, op, wanted in requirements:
        try:
            have = metadata.version(name)
        except metadata.PackageNotFoundError:
            return f"needs {name}{op}{wanted}, which is not installed"
        if not _COMPARE[op](parse(have), parse(wanted)):
            return f"needs {name}{op}{wanted}; {name} {have} is installed"
    return None


def all_cases() -> list[Case]:
    cases = [Case(path) for path in sorted(SNAPSHOT_DIR.glob("*/*.py"))]
    for case in cases:
        if case.kind not in KINDS:
            raise ValueError(f"{case.path}: name must start with one of {KINDS}")
    return cases


def fix(case: Case, source: bytes | None = None, unsafe: bool | None = None, rules=None):
    """Run the case's rule alone (or ``rules``) over ``source`` (default: the case's own)."""
    from jax_codemod.engine.pipeline import Settings, process_source

    settings = Settings(
        rules=rules or (case.rule(case.options),),
        unsafe_fixes=(case.kind == "unsafe") if unsafe is None else unsafe,
    )
    return process_source(case.source if source is None else source, case.path.name, settings)
