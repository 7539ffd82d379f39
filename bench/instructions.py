"""Count the instructions a cold ``-j 1`` run executes, here and at other revisions, side by side.

    python bench/instructions.py --tree /tmp/corpus5 --baseline main~3     # this checkout vs main~3
    python bench/instructions.py --tree /tmp/corpus5 --baseline A --baseline B --only JAX001

CPU time on a shared machine varies by a fifth from one run to the next, more than most changes
to the engine; the number of instructions a run executes does not. Each run is
``codemod run --check --no-cache --no-progress -j 1 TREE`` under valgrind's cachegrind (no cache
simulation), with ``PYTHONHASHSEED=0`` (set and dict orders, so the work, are the same every run)
and every revision's bytecode compiled first (a run that compiles its sources counts that too).
About 50x slower than the run itself: the issue 18 corpus takes ~4 minutes per revision, and the
revisions run in parallel, one per CPU. Needs ``valgrind`` on PATH.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

from run import baseline_package  # bench/run.py lays a revision's package out

_REFS = re.compile(r"I\s+refs:\s+([\d,]+)")


def command(tree: str, only: list[str], budget: bool = True) -> list[str]:
    """The run counted. ``budget``: the revision has the analysis budget, whose CPU alarm is
    turned off: under valgrind (~50x slower) a file's analysis passes it, and a SIGVTALRM
    that valgrind delivers after the handler is put back ends the whole run."""
    selected = [f"--select={code}" for code in only]
    unlimited = ["--analysis-budget-seconds=0", "--analysis-budget-mib=0"] if budget else []
    return [sys.executable, "-m", "jax_codemod.cli", "run", "--check", "--no-cache", "--no-progress",
            "-j", "1", *unlimited, *selected, tree]


def _has_budget(cli: Path) -> bool:
    """Whether the CLI at ``cli`` (a folder) takes the analysis budget's options."""
    return "--analysis-budget-seconds" in (cli / "main.py").read_text(encoding="utf-8")


def compiled(path: Path) -> None:
    """Write the bytecode of every module under ``path`` (what pip does when it installs)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(path)], env=env, check=True,
                   stdout=subprocess.DEVNULL)


def instructions(run: list[str], pythonpath: str | None, scratch: Path) -> int:
    env = dict(os.environ, PYTHONHASHSEED="0")
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    out = scratch / f"cachegrind.{os.getpid()}.{abs(hash((pythonpath, *run)))}"
    done = subprocess.run(
        ["valgrind", "--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={out}", *run],
        env=env, capture_output=True, text=True, check=False,
    )
    found = _REFS.search(done.stderr)
    if found is None:
        raise SystemExit(f"valgrind reported no count (exit {done.returncode}):\n{done.stderr[-2000:]}")
    # A run that died part way (killed, out of memory, a traceback) still has a count, a smaller
    # one: one such run once showed a revision at half its instructions.
    if done.returncode not in (0, 1) or "Traceback (most recent call last)" in done.stderr:
        raise SystemExit(f"the run under valgrind failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", required=True, help="the folder to check (e.g. bench/corpus.py's)")
    parser.add_argument("--baseline", metavar="REV", action="append", default=[],
                        help="also count at this git revision (repeatable)")
    parser.add_argument("--only", metavar="CODE", action="append", default=[],
                        help="run only these rules (--select); default: the default rules")
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not on PATH")
    run = command(args.tree, args.only, _has_budget(REPO / "cli"))
    with tempfile.TemporaryDirectory(prefix="codemod-instructions-") as name:
        scratch = Path(name)
        compiled(REPO / "codemods")
        compiled(REPO / "cli")
        sides: list[tuple[str, str | None, list[str]]] = [("this checkout", None, run)]
        for number, revision in enumerate(args.baseline):
            package = baseline_package(revision, scratch / f"baseline{number}")
            compiled(package)
            own = command(args.tree, args.only, _has_budget(package / "jax_codemod" / "cli"))
            sides.append((revision, str(package), own))
        with ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1)) as pool:
            counts = list(pool.map(lambda side: instructions(side[2], side[1], scratch), sides))
    reference = counts[0]
    print(f"instructions of `{' '.join(run[1:])}` (cachegrind, PYTHONHASHSEED=0)")
    for (label, _, _), count in zip(sides, counts):
        change = "" if count is reference else f"  (this checkout: {(reference - count) / count:+.1%})"
        print(f"  {label:>16}: {count / 1e9:7.2f} G{change}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
