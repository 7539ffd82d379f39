"""Run every rule over installed packages, in memory, and write what would change.

    python scripts/scan_site_packages.py                       # jax jaxlib numpy torch
    python scripts/scan_site_packages.py jax numpy -o scan.md  # a report to review

Nothing is written into site-packages: each file is checked and fixed in memory with
all registered rules selected and unsafe fixes on. Every fixed file must parse (ast and
libcst) and fixing it again must change nothing. The report lists each finding and
the unified diff of each change, for a person to review; the exit status is 1 if any
file crashed a rule, produced invalid output or was not idempotent.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import os
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import jax_codemod
from jax_codemod.engine.discovery import discover
from jax_codemod.engine.pipeline import FileResult, Settings, process_source
from jax_codemod.engine.runner import check_files

DEFAULT_PACKAGES = ("jax", "jaxlib", "numpy", "torch")


@dataclass
class Scan:
    package: str
    files: int = 0
    seconds: float = 0.0
    changed: list[FileResult] = field(default_factory=list)
    findings: list = field(default_factory=list)
    # (path, message): a rule crashed, a fix did not parse or was not idempotent.
    problems: list[tuple[str, str]] = field(default_factory=list)
    # (path, message): the file itself cannot be parsed by this Python.
    unparsable: list[tuple[str, str]] = field(default_factory=list)


def all_rules() -> Settings:
    return Settings(rules=tuple(rule() for rule in jax_codemod.RULES), unsafe_fixes=True)


def package_dir(name: str) -> str | None:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return next(iter(spec.submodule_search_locations))


def scan_package(name: str, settings: Settings | None = None, jobs: int | None = None) -> Scan:
    settings = settings or all_rules()
    scan = Scan(name)
    directory = package_dir(name)
    if directory is None:
        scan.problems.append((name, "not installed"))
        return scan
    started = time.monotonic()
    files = discover([directory]).files
    scan.files = len(files)
    for result in check_files(files, settings, jobs):
        scan.findings.extend(result.findings)
        if result.error is not None:
            _classify_error(result, scan)
        elif result.changed:
            scan.changed.append(result)
            problem = _check_fixed(result, settings)
            if problem:
                scan.problems.append((result.path, problem))
    scan.seconds = time.monotonic() - started
    return scan


def _classify_error(result: FileResult, scan: Scan) -> None:
    message = result.error.message
    if message.startswith(("cannot parse", "cannot read")) and not _python_parses(result.path):
        scan.unparsable.append((result.path, message))
    else:
        scan.problems.append((result.path, message))


def _python_parses(path: str) -> bool:
    try:
        ast.parse(Path(path).read_bytes())
    except (SyntaxError, ValueError, OSError):
        return False
    return True


def _check_fixed(result: FileResult, settings: Settings) -> str | None:
    import libcst as cst

    try:
        ast.parse(result.fixed)
        cst.parse_module(result.fixed)
    except Exception as error:  # noqa: BLE001 -- any failure is the finding here
        return f"fixed output does not parse: {type(error).__name__}: {error}"
    again = process_source(result.fixed, result.path, settings)
    if again.error is not None:
        return f"second pass failed: {again.error.message}"
    if again.changed:
        return "not idempotent: a second pass changes the fixed output again"
    return None


def render(scans: list[Scan]) -> str:
    out = ["# codemod over installed packages (all rules, unsafe fixes on, in memory)", ""]
    for scan in scans:
        by_code = Counter(f.code for f in scan.findings)
        out.append(
            f"## {scan.package}: {scan.files} files, {len(scan.findings)} findings "
            f"({', '.join(f'{c} {n}' for c, n in sorted(by_code.items())) or 'none'}), "
            f"{len(scan.changed)} files would change, {len(scan.problems)} problems, "
            f"{len(scan.unparsable)} unparsable by this Python, {scan.seconds:.1f} s"
        )
        out.append("")
        for path, message in scan.problems:
            out.append(f"- PROBLEM {path}: {message}")
        for path, message in scan.unparsable:
            out.append(f"- unparsable {path}: {message}")
        for finding in scan.findings:
            fix = "applied" if finding.applied else f"fix {finding.fix.value}"
            out.append(f"- {finding.path}:{finding.line}:{finding.column}: {finding.code} {finding.message} [{fix}]")
        for result in scan.changed:
            out.extend(["", "```diff", result.diff(os.path.relpath(result.path)).rstrip("\n"), "```"])
        out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("packages", nargs="*", default=list(DEFAULT_PACKAGES))
    parser.add_argument("-o", "--output", help="write the report here (default: stdout)")
    parser.add_argument("-j", "--jobs", type=int, help="parallel processes")
    args = parser.parse_args(argv)
    scans = [scan_package(name, jobs=args.jobs) for name in args.packages]
    report = render(scans)
    if args.output:
        Path(args.output).write_text(report, encoding="utf-8")
    else:
        sys.stdout.write(report)
    for scan in scans:
        print(
            f"{scan.package}: {scan.files} files, {len(scan.findings)} findings, {len(scan.changed)} would change, "
            f"{len(scan.problems)} problems, {scan.seconds:.1f} s",
            file=sys.stderr,
        )
    return 1 if any(scan.problems for scan in scans) else 0


if __name__ == "__main__":
    sys.exit(main())
