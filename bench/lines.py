"""Count the Python lines a cold ``-j 1`` run executes, per function, here and at a baseline.

    python bench/lines.py --tree /tmp/jaxheavy --baseline 0503528            # totals and the top 40
    python bench/lines.py --tree /tmp/jaxheavy --baseline 0503528 --top 80 --by line

Instructions (``bench/instructions.py``) say how much a change costs; they do not say where,
in Python code, since cachegrind sees the interpreter's C functions only. This counts the line
events ``sys.settrace`` reports (one each time a line of Python starts running) per function,
for this checkout and for each ``--baseline`` revision, in a fresh process each, with
``PYTHONHASHSEED=0``: the count is the same from run to run, and it follows the bytecode the
interpreter runs (on the bench tree, a change's share of the lines and of the interpreter's own
instructions moved together). A function is keyed by its file (under the package) and name, so a
function that moved within a file still matches; one renamed or split shows as a new line and a
gone one. About five times slower than the run itself.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

from run import baseline_package  # bench/run.py lays a revision's package out

# Run in the measured process: count line events per code object, then run the CLI once.
_COUNT = r"""
import collections, contextlib, io, json, re, sys
counts = collections.Counter()

def tracer(frame, event, arg):
    if event != "call":
        return None
    code = frame.f_code
    key = (code.co_filename, code.co_name, code.co_firstlineno)

    def local(frame, event, arg):
        if event == "line":
            counts[key] += 1
        return local

    return local

from jax_codemod.cli.main import main
argv = json.loads(sys.argv[1])
sys.settrace(tracer)
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    main(argv)
sys.settrace(None)
# The package's own files as jax_codemod/...: an editable install keeps cli/ beside codemods/,
# a laid-out revision inside jax_codemod/ (the two must key alike).
import jax_codemod, jax_codemod.cli, os
own = sorted(((os.path.dirname(m.__file__) + os.sep, name) for m, name in
              ((jax_codemod, "jax_codemod/"), (jax_codemod.cli, "jax_codemod/cli/"))), reverse=True)
def key(f):
    for prefix, name in own:
        if f.startswith(prefix):
            return name + f[len(prefix):].replace(os.sep, "/")
    return re.sub(r".*/(jax_codemod|codemods)/", "jax_codemod/", f)
rows = [[key(f), n, l, c] for (f, n, l), c in counts.items()]
json.dump(rows, open(sys.argv[2], "w"))
"""


def count(tree: str, pythonpath: str | None, jobs_args: list[str]) -> list[list]:
    """[file, function, first line, line events] of one run over ``tree``."""
    argv = ["run", "--check", "--no-progress", "--no-cache", *jobs_args,
            "--analysis-budget-seconds=0", "--analysis-budget-mib=0", tree]
    env = dict(os.environ, PYTHONHASHSEED="0")
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run([sys.executable, "-c", _COUNT, json.dumps(argv), out.name], env=env, check=True)
        return json.loads(Path(out.name).read_text())


def totals(rows: list[list], by: str) -> collections.Counter:
    found: collections.Counter = collections.Counter()
    for file, name, line, events in rows:
        found[(file, name, line) if by == "line" else (file, name) if by == "function" else (file,)] += events
    return found


def compare(here: collections.Counter, there: collections.Counter, top: int) -> list[str]:
    """The ``top`` keys that gained most lines here over there, then the ``top // 4`` that lost most."""
    keys = sorted(set(here) | set(there), key=lambda k: there.get(k, 0) - here.get(k, 0))
    shown = keys[:top] + [key for key in keys[::-1][: top // 4] if key not in keys[:top]]
    return [f"{here.get(k, 0) - there.get(k, 0):+10,d} {here.get(k, 0):10,d} {there.get(k, 0):10,d}  "
            + ":".join(map(str, k)) for k in shown]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree", required=True, help="the folder to check")
    parser.add_argument("--baseline", metavar="REV", action="append", default=[], help="a git revision to compare with")
    parser.add_argument("--by", choices=("function", "line", "file"), default="function")
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args(argv)
    here = totals(count(args.tree, None, ["-j", "1"]), args.by)
    print(f"Python lines of `run --check --no-cache -j 1 {args.tree}` (sys.settrace, PYTHONHASHSEED=0)")
    print(f"  this checkout: {sum(here.values()):,}")
    with tempfile.TemporaryDirectory() as scratch:
        for revision in args.baseline:
            package = baseline_package(revision, Path(scratch) / revision.replace("/", "_"))
            there = totals(count(args.tree, str(package), ["-j", "1"]), args.by)
            change = sum(here.values()) / max(1, sum(there.values())) - 1
            print(f"  {revision}: {sum(there.values()):,} (this checkout: {change:+.1%})")
            print(f"  {'here - there':>10} {'here':>10} {'there':>10}  {args.by}")
            for row in compare(here, there, args.top):
                print("  " + row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
