"""Check that a change loses no finding: the same ``--format json`` output as a baseline build.

    python bench/same_findings.py --baseline-cmd /work/main/.venv/bin/codemod \\
        tests/snapshots tests/realworld examples "$(cat /tmp/treepath)" --packages torch numpy

For each PATH (and each of ``--packages``, whose installed ``*.py`` files are first copied to a
temporary directory, so nothing ever writes into site-packages) both commands run

    CMD run --dry-run --no-cache --select ALL --format json PATH

from the same working directory, and their exit codes and JSON documents must be identical
(keys that hold timings, should a later version add any, are dropped first: ``--ignore-key``).
``--cmd`` is the build under test (default: this interpreter's ``-m jax_codemod.cli``, i.e. the
package installed in the running environment). ``--variants`` also runs the build under test
with ``-j 1``, ``-j 2``, and twice with a fresh result cache (cold, then warm), each compared
with the baseline: results must not depend on the pool or the cache.

Exit status: 0 when every comparison is identical, 1 otherwise (the first differences are
printed per path), 2 on a usage error or a command that produced no JSON.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TIMING_KEYS = ("elapsed", "seconds", "duration", "time", "timing", "timings")


def run_json(command: list[str], path: str, extra: list[str], cwd: str) -> tuple[int, dict, float]:
    full = [*command, "run", "--dry-run", "--no-cache", "--select", "ALL", "--format", "json", *extra, path]
    if "--cache-dir" in extra:  # a cached variant: --no-cache would switch the cache off
        full.remove("--no-cache")
    started = time.perf_counter()
    done = subprocess.run(full, capture_output=True, text=True, cwd=cwd, check=False)
    elapsed = time.perf_counter() - started
    try:
        document = json.loads(done.stdout)
    except json.JSONDecodeError:
        raise SystemExit(
            f"error: no JSON from {shlex.join(full)} (exit {done.returncode}):\n{done.stderr[-3000:]}"
        ) from None
    return done.returncode, document, elapsed


def normalised(value, ignored: frozenset[str]):
    if isinstance(value, dict):
        return {k: normalised(v, ignored) for k, v in value.items() if k not in ignored}
    if isinstance(value, list):
        return [normalised(v, ignored) for v in value]
    return value


def differences(expected: dict, actual: dict, limit: int = 10) -> list[str]:
    """Human-readable differences between two JSON documents, findings first."""
    lines: list[str] = []

    def keyed(items, key):
        return {json.dumps(key(item), sort_keys=True): item for item in items}

    for section, key in (
        ("findings", lambda f: f),
        ("errors", lambda e: e),
        ("diffs", lambda d: d),
    ):
        before = keyed(expected.get(section, []), key)
        after = keyed(actual.get(section, []), key)
        lost = [before[k] for k in before if k not in after]
        gained = [after[k] for k in after if k not in before]
        for item in lost[:limit]:
            lines.append(f"  - {section} only in the baseline: {_short(item)}")
        for item in gained[:limit]:
            lines.append(f"  + {section} only in the build under test: {_short(item)}")
        if not lost and not gained and expected.get(section) != actual.get(section):
            lines.append(f"  ~ {section}: the same entries in a different order")
    for key in sorted(set(expected) | set(actual)):
        if key in ("findings", "errors", "diffs"):
            continue
        if expected.get(key) != actual.get(key):
            lines.append(f"  ~ {key}: {json.dumps(expected.get(key))} -> {json.dumps(actual.get(key))}")
    return lines


def _short(item: dict) -> str:
    text = json.dumps(item, sort_keys=True)
    return text if len(text) <= 400 else text[:400] + "..."


def copy_package(name: str, destination: Path) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"error: package {name} is not installed")
    target = destination / name
    for location in spec.submodule_search_locations:
        source = Path(location)
        for path in source.rglob("*.py"):
            copy = target / path.relative_to(source)
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, copy)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", help="files or folders to compare on")
    parser.add_argument("--baseline-cmd", required=True,
                        help="the reference build's codemod command (shell words), e.g. /work/main/.venv/bin/codemod")
    parser.add_argument("--cmd", help="the build under test (default: this interpreter's -m jax_codemod.cli)")
    parser.add_argument("--packages", nargs="*", default=[],
                        help="installed packages whose *.py files are copied to a temporary folder and compared on")
    parser.add_argument("--variants", action="store_true",
                        help="also compare the build under test with -j 1, -j 2, and cold then warm cache")
    parser.add_argument("--ignore-key", action="append", default=list(TIMING_KEYS),
                        help="a JSON key to drop before comparing (repeatable; default: timing keys)")
    parser.add_argument("--cwd", default=os.getcwd(), help="working directory of both commands (paths are shown relative to it)")
    args = parser.parse_args(argv)
    if not args.paths and not args.packages:
        parser.error("give PATHS or --packages")
    baseline = shlex.split(args.baseline_cmd)
    build = shlex.split(args.cmd) if args.cmd else [sys.executable, "-m", "jax_codemod.cli"]
    ignored = frozenset(args.ignore_key)
    failures = 0
    with tempfile.TemporaryDirectory(prefix="codemod-same-") as scratch_name:
        scratch = Path(scratch_name)
        paths = list(args.paths)
        for name in args.packages:
            paths.append(str(copy_package(name, scratch / "packages")))
        for path in paths:
            expected_code, expected, baseline_s = run_json(baseline, path, [], args.cwd)
            expected = normalised(expected, ignored)
            variants: list[tuple[str, list[str]]] = [("default", [])]
            if args.variants:
                cache = str(scratch / f"cache{len(os.listdir(scratch))}")
                variants += [("-j 1", ["-j", "1"]), ("-j 2", ["-j", "2"]),
                             ("cache cold", ["--cache-dir", cache]), ("cache warm", ["--cache-dir", cache])]
            for label, extra in variants:
                code, actual, build_s = run_json(build, path, extra, args.cwd)
                actual = normalised(actual, ignored)
                findings = len(expected.get("findings", []))
                if code == expected_code and actual == expected:
                    print(f"same     {path} [{label}]: {findings} findings, "
                          f"{len(expected.get('errors', []))} errors, exit {code} "
                          f"(baseline {baseline_s:.1f} s, build {build_s:.1f} s)")
                    continue
                failures += 1
                print(f"DIFFERENT {path} [{label}]:")
                if code != expected_code:
                    print(f"  ~ exit code: {expected_code} -> {code}")
                for line in differences(expected, actual):
                    print(line)
    print("all identical" if not failures else f"{failures} comparison(s) differ")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
