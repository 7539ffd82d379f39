"""The work-count guard: the Python lines a cold ``-j 1`` run executes over a fixed set of real code.

    python bench/workcount.py                      # check against bench/baseline.json (CI: .ci/run)
    python bench/workcount.py --rebaseline --reason "why the count moved"   # then commit both
    python bench/workcount.py --revision HEAD      # a revision's package, not the working tree

Timing a run on a shared machine moves by more than the changes a guard must catch (issue 55:
each issue met "+10% on the bench tree" by the clock, and trees other than that one paid several
times that). This counts work instead, the same on every run: the line events ``sys.settrace``
reports (``bench/lines.py``'s count, ``PYTHONHASHSEED=0``, no analysis budget) in one fresh
process per tree, over trees that exist offline wherever the test environment is installed:

  jax, jaxlib, torch, numpy, libcst   the installed packages' ``*.py`` files, copied to a scratch
                                      folder (JAX's own code; a large library that uses DLPack;
                                      two with no JAX at all)
  realworld                           ``tests/realworld`` (interop code from ten projects), copied

The figure guarded is the lines of codemod's own code and of the standard library it calls
(``re``'s compiler among them); a third-party package's lines (click's) are shown but not
guarded, since its version floats. Each tree's files are digested: a tree that differs from the
baseline's (another numpy or libcst installed: the test environment pins neither) is left out of
the comparison with a warning that names the versions, since a count over other files says
nothing about the change; with no tree left, or another Python, the check refuses (exit 2).

The check fails when a tree's count, or the total, grows by more than ``TOLERANCE`` (3%) over
``bench/baseline.json``, or shrinks by more (re-baseline, so that later creep cannot spend the
saving; per tree, so that a saving on one cannot hide a cost on another). A change that
moves the count on purpose re-baselines in the same commit, and the commit message gives the
reason (``--reason`` records it in the baseline too). About 25 s on one core.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import os
import platform
import shutil
import sys
import sysconfig
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

from lines import count  # bench/lines.py: a cold -j 1 run's line events per function
from run import baseline_package  # bench/run.py: a revision's package laid out

try:
    from _blake2 import blake2b
except ImportError:  # another Python implementation
    from hashlib import blake2b

BASELINE = REPO / "bench" / "baseline.json"
PACKAGES = ("jax", "jaxlib", "torch", "numpy", "libcst")
TREES = (*PACKAGES, "realworld")
TOLERANCE = 0.03
_PERCENT = round(TOLERANCE * 100)  # compared in integers: 3% over is a fail, not a float's rounding
_STDLIB = os.path.realpath(sysconfig.get_paths()["stdlib"]) + os.sep
# The trees are laid out at this one path, here and in CI: the count depends on the paths' strings
# (their hashes order the sets a run iterates; a fresh temporary name moved it by ±3% from run
# to run). Emptied before and after each use.
SCRATCH = Path("/tmp/codemod-workcount")


def lay_out(scratch: Path) -> dict[str, Path]:
    """Each tree's folder under ``scratch``: the packages' ``*.py`` files copied (so nothing is
    checked in site-packages) and ``tests/realworld``, at ``SCRATCH``."""
    trees: dict[str, Path] = {}
    for name in PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            raise SystemExit(f"error: {name} is not installed: the guard's trees are the test environment's packages")
        target = scratch / name
        for location in spec.submodule_search_locations:
            source = Path(location)
            for path in sorted(source.rglob("*.py")):
                copy = target / path.relative_to(source)
                copy.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, copy)
        trees[name] = target
    # Copied too, so that its path is the same wherever the checkout is.
    trees["realworld"] = shutil.copytree(REPO / "tests" / "realworld", scratch / "realworld",
                                         ignore=shutil.ignore_patterns("__pycache__"))
    return trees


def digest(tree: Path) -> tuple[str, int]:
    """A digest of the tree's ``*.py`` files (paths and bytes), and how many there are."""
    found = blake2b(digest_size=16)
    files = sorted(tree.rglob("*.py"))
    for path in files:
        found.update(path.relative_to(tree).as_posix().encode("utf-8", "surrogateescape") + b"\0")
        found.update(path.read_bytes() + b"\0")
    return found.hexdigest(), len(files)


def kind(file: str) -> str:
    """Whose code a line event ran in: codemod's, the standard library's, or another package's."""
    if file.startswith("jax_codemod/"):
        return "codemod"
    if file.startswith("<frozen "):
        # posixpath, os, codecs run frozen; the import system's work depends on whether
        # bytecode was cached, not on the change measured.
        return "other" if file.startswith("<frozen importlib") else "stdlib"
    real = os.path.realpath(file)
    if real.startswith(_STDLIB) and "site-packages" not in real:
        return "stdlib"
    return "other"


def measure(trees: dict[str, Path], pythonpath: str | None = None) -> dict[str, dict]:
    """Per tree: its digest and files, and the line events by whose code ran them."""
    found = {}
    for name, tree in trees.items():
        tree_digest, files = digest(tree)
        lines = {"codemod": 0, "stdlib": 0, "other": 0}
        for file, _function, _line, events in count(str(tree), pythonpath, ["-j", "1"]):
            lines[kind(file)] += events
        found[name] = {"files": files, "digest": tree_digest, "lines": lines,
                       "guarded": lines["codemod"] + lines["stdlib"]}
        print(f"  {name:10} {files:5} files  {found[name]['guarded']:>11,} lines "
              f"(codemod {lines['codemod']:,}, stdlib {lines['stdlib']:,}; not guarded: other {lines['other']:,})",
              file=sys.stderr)
    return found


def environment() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for name in PACKAGES:
        versions[name] = importlib.metadata.version(name)
    return versions


def compare(baseline: dict, measured: dict[str, dict], versions: dict[str, str]) -> tuple[int, list[str]]:
    """(exit status, lines to print): 0 within the tolerance, 1 outside it, 2 when nothing can be
    compared (another Python, or no tree is the baseline's). A tree whose files are not the
    baseline's (numpy and libcst float in the test environment; a CUDA build of torch differs
    from the CPU one in its version module) is left out of the comparison, and said so: a count
    over other files says nothing about the change, and the other trees still do."""
    out: list[str] = []
    differ = [name for name in TREES
              if name not in baseline["trees"] or baseline["trees"][name]["digest"] != measured[name]["digest"]]
    same = [name for name in TREES if name not in differ]
    if not same or versions["python"].rsplit(".", 1)[0] != baseline["versions"]["python"].rsplit(".", 1)[0]:
        out.append("error: the guard's trees are not the baseline's, so the counts say nothing about the change: "
                   + ", ".join(differ if same == [] else ["python"]))
        out.append(f"  baseline: {baseline['versions']}")
        out.append(f"  here:     {versions}")
        out.append("  install those versions, or re-baseline (python bench/workcount.py --rebaseline --reason ...)"
                   " in a commit whose message says the environment moved")
        return 2, out
    if differ:
        out.append(f"warning: not compared, their files are not the baseline's: {', '.join(differ)} "
                   f"(baseline {baseline['versions']}, here {versions}); re-baseline to compare them again")
    # Each tree on its own and the total: a saving on one tree must not hide a cost on another
    # (issue 55: the old guard's one tree met its bar while the others paid several times it).
    grown, shrunk = [], []
    rows = [(name, measured[name]["guarded"], baseline["trees"][name]["guarded"]) for name in same]
    rows.append(("total", sum(measured[name]["guarded"] for name in same),
                 sum(baseline["trees"][name]["guarded"] for name in same)))
    for name, here, there in rows:
        out.append(f"  {name:10} {here:>11,} against {there:>11,} ({here / max(1, there) - 1:+.2%})")
        if here * 100 > there * (100 + _PERCENT):
            grown.append(name)
        elif here * 100 < there * (100 - _PERCENT):
            shrunk.append(name)
    out.append(f"  (tolerance ±{TOLERANCE:.0%} per tree and in total)")
    if grown:
        out.append(f"error: a cold -j 1 run executes more than {TOLERANCE:.0%} more Python lines than "
                   f"bench/baseline.json on: {', '.join(grown)}. Find where with `python bench/lines.py --tree TREE "
                   "--baseline REV`; if the cost is meant, re-baseline in the same commit (--rebaseline --reason ...) "
                   "and give the reason in its message.")
        return 1, out
    if shrunk:
        out.append(f"error: more than {TOLERANCE:.0%} fewer lines than bench/baseline.json on: {', '.join(shrunk)}: "
                   "re-baseline to keep the saving (python bench/workcount.py --rebaseline --reason ...), so later "
                   "creep cannot spend it.")
        return 1, out
    return 0, out


def _short(revision: str) -> str:
    import subprocess

    return subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", revision],
                          capture_output=True, text=True, check=True).stdout.strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rebaseline", action="store_true", help="write bench/baseline.json from this checkout")
    parser.add_argument("--reason", help="why the count moved (required with --rebaseline; repeat it in the commit message)")
    parser.add_argument("--baseline-file", type=Path, default=BASELINE)
    parser.add_argument("--revision", help="count this git revision's package (laid out from git) instead of the "
                        "installed checkout: a baseline for a commit, whatever the working tree holds")
    parser.add_argument("--package", help="count the jax_codemod package in this folder (a revision with a change "
                        "applied by hand, in a checkout others edit too) instead of the installed checkout")
    args = parser.parse_args(argv)
    if args.rebaseline and not (args.reason or "").strip():
        parser.error("--rebaseline needs --reason: what moved the count, as the commit message says it")
    versions = environment()
    shutil.rmtree(SCRATCH, ignore_errors=True)
    try:
        print(f"Python lines of cold `run --check --no-cache -j 1` per tree, {versions}", file=sys.stderr)
        package = str(baseline_package(args.revision, SCRATCH / "revision")) if args.revision else args.package
        measured = measure(lay_out(SCRATCH / "trees"), package)
    finally:
        shutil.rmtree(SCRATCH, ignore_errors=True)
    if args.rebaseline:
        document = {
            "what": "bench/workcount.py: Python lines (codemod's and the standard library's) of a cold -j 1 run per tree",
            "revision": _short(args.revision) if args.revision else args.package or "the working tree",
            "reason": args.reason.strip(),
            "versions": versions,
            "total": sum(tree["guarded"] for tree in measured.values()),
            "trees": measured,
        }
        args.baseline_file.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
        print(f"wrote {args.baseline_file}: {document['total']:,} lines", file=sys.stderr)
        return 0
    if not args.baseline_file.exists():
        print(f"error: no baseline at {args.baseline_file}; write one with --rebaseline --reason ...", file=sys.stderr)
        return 2
    status, lines = compare(json.loads(args.baseline_file.read_text()), measured, versions)
    print("\n".join(lines), file=sys.stderr)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
