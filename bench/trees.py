"""codemod against ruff (and against a revision of codemod) per tree, side by side, in CPU time.

    python bench/trees.py --corpus /tmp/corpus5 --site jax numpy --tree black=/tmp/black --baseline 67c6bf8

Issue 55: a guard measured on one tree (JAX's own installed files) while other trees paid several
times its cost. This reports each tree on its own line:

  corpus      ``--corpus``'s folder whole (``bench/corpus.py`` lays out jax, flax, warp, brax and
              mujoco_playground), default ``-j``, then each of its repositories with ``-j 1``
  site        ``--site``'s installed packages' ``*.py`` files copied into one folder (default jax
              and numpy: what a virtualenv holds), default ``-j`` and ``-j 1``
  --tree      any folder as ``NAME=PATH`` (a repository with no JAX: the common case of a CI bot
              run over a whole organisation), default ``-j`` and ``-j 1``

Each repetition runs every command of a tree once, in a rotated order, from an empty working
directory (so no tool finds a configuration or a project around it): codemod cold (``--no-cache``),
codemod at each ``--baseline`` revision (its package laid out from git, first on PYTHONPATH),
and ``ruff check --no-cache --isolated``. Reported: medians of CPU (user+sys of the process tree)
and wall, the peak RSS of the largest process, the codemod/ruff CPU ratio, and each baseline's
change. State the machine's load with
the figures: two shared cores move wall time by more than most changes.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

from run import baseline_package, codemod_command, copy_sources, measure  # bench/run.py


def trees_of(args, scratch: Path) -> list[tuple[str, Path, list[str]]]:
    """(name, folder, the -j settings to run it with) for each tree asked for."""
    found: list[tuple[str, Path, list[str]]] = []
    if args.corpus:
        corpus = args.corpus.resolve()
        found.append(("corpus", corpus, ["default"]))
        found += [(f"  {repository.name}", repository, ["1"]) for repository in sorted(corpus.iterdir())
                  if repository.is_dir()]
    if args.site:
        site = scratch / "site"
        copy_sources(args.site, site)
        found.append(("site:" + "+".join(args.site), site, ["default", "1"]))
    for spec in args.tree:
        name, _, path = spec.partition("=")
        if not path:
            raise SystemExit(f"--tree {spec!r}: give NAME=PATH")
        found.append((name, Path(path).resolve(), ["default", "1"]))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, help="bench/corpus.py's folder: the whole, then each repository -j 1")
    parser.add_argument("--site", nargs="*", default=[], help="installed packages laid out as one tree")
    parser.add_argument("--tree", action="append", default=[], metavar="NAME=PATH", help="another folder")
    parser.add_argument("--baseline", action="append", default=[], metavar="REV", help="codemod at a git revision")
    parser.add_argument("--package", action="append", default=[], metavar="NAME=PATH",
                        help="also codemod from a folder that holds a jax_codemod package, compared like a baseline")
    parser.add_argument("--build", metavar="REV", help="the build under test at a git revision (default: the "
                        "installed checkout, uncommitted edits and all)")
    parser.add_argument("--baseline-deps", action="append", default=[], metavar="PATH",
                        help="a folder of a baseline's own dependencies (0.2.0 needs pathspec 0.12: "
                        "pip install --target PATH 'pathspec==0.12.1')")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--ruff", default=shutil.which("ruff") or str(Path(sys.executable).parent / "ruff"))
    parser.add_argument("--json", type=Path, help="also write every measurement here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="codemod-trees-") as scratch_name:
        scratch = Path(scratch_name)
        empty = scratch / "cwd"
        empty.mkdir()
        envs = {"codemod": None}
        if args.build:  # the build under test laid out from git, not the installed checkout
            envs["codemod"] = dict(os.environ, PYTHONPATH=str(baseline_package(args.build, scratch / "build")))
        for revision in args.baseline:
            package = baseline_package(revision, scratch / f"rev-{revision.replace('/', '_')}")
            envs[f"@{revision}"] = dict(os.environ, PYTHONPATH=os.pathsep.join([str(package), *args.baseline_deps]))
        for spec in args.package:  # a package laid out by hand (a revision with one change taken out)
            name, _, path = spec.partition("=")
            args.baseline.append(name)
            envs[f"@{name}"] = dict(os.environ, PYTHONPATH=os.pathsep.join([path, *args.baseline_deps]))
        commands = {name: codemod_command(env) for name, env in envs.items()}
        for name, env in envs.items():  # once untimed: a laid-out revision's bytecode is written then
            # (and a build that cannot start says so here, not as a fast run that "found" something)
            measure([*commands[name], str(empty)], ok_codes=(0,), env=env)
        rows, everything = [], {}
        os.chdir(empty)
        for name, tree, jobs in trees_of(args, scratch):
            tools: list[tuple[str, list[str], dict | None]] = []
            for setting in jobs:
                extra = [] if setting == "default" else ["-j", setting]
                suffix = "" if setting == "default" else f" -j {setting}"
                tools += [(f"{tool}{suffix}", [*commands[tool], *extra, str(tree)], envs[tool]) for tool in envs]
            tools.append(("ruff", [args.ruff, "check", "--no-cache", "--isolated", "--exit-zero", "-q", str(tree)], None))
            runs: dict[str, list[dict]] = {label: [] for label, _c, _e in tools}
            for round_number in range(args.repeat):
                shift = round_number % len(tools)
                for label, command, env in tools[shift:] + tools[:shift]:
                    result = measure(command, env=env)
                    if "Traceback (most recent call last)" in result["stderr"]:
                        raise SystemExit(f"{label} crashed on {tree}:\n{result['stderr']}")
                    runs[label].append(result)
            cpu = {label: statistics.median(r["cpu"] for r in found) for label, found in runs.items()}
            wall = {label: statistics.median(r["wall"] for r in found) for label, found in runs.items()}
            rss = {label: max(r["rss_kb"] for r in found) / 1024 for label, found in runs.items()}
            files = sum(1 for _ in tree.rglob("*.py"))
            for label in runs:
                if label == "ruff":
                    continue
                tool = label.split(" -j")[0]
                versus = [f"{cpu[label] / cpu['ruff']:.2f}x ruff"]
                if tool == "codemod":
                    for revision in args.baseline:
                        other = label.replace("codemod", f"@{revision}", 1)
                        versus.append(f"{cpu[label] / cpu[other] - 1:+.0%} vs {revision}")
                rows.append(f"{name:34} {files:5} files  {label:22} {cpu[label]:6.2f} s CPU {wall[label]:6.2f} s wall "
                            f"{rss[label]:4.0f} MiB  " + ", ".join(versus))
            rows.append(f"{name:34} {files:5} files  {'ruff':22} {cpu['ruff']:6.2f} s CPU {wall['ruff']:6.2f} s wall "
                        f"{rss['ruff']:4.0f} MiB")
            print("\n".join(rows[-len(runs):]), file=sys.stderr)
            everything[name.strip()] = {"tree": str(tree), "runs": runs}
        os.chdir(REPO)
    print(f"medians of {args.repeat}, side by side, from an empty working directory; load {os.getloadavg()[0]:.1f}")
    print("\n".join(rows))
    if args.json:
        args.json.write_text(json.dumps(everything, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
