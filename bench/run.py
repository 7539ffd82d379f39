"""Time codemod against ruff, the reading floor and ``ast.parse`` on a JAX-heavy tree.

    python bench/run.py                                  # docs/performance.md's figures (JAX-heavy tree, 5 reps)
    python bench/run.py --repeat 1 --scales 1 --tiny 0   # a quick look while developing
    python bench/run.py --per-rule                       # also: CPU per rule, in process, -j 1
    python bench/run.py --baseline main                  # also: codemod cold at another revision
    python bench/run.py --packages jax torch numpy --libcst-files 120   # the old benchmark, with libcst
    python bench/corpus.py /tmp/corpus5 && python bench/run.py --tree /tmp/corpus5 --per-rule  # issue 18's corpus

The tree is laid out from installed sources: the *.py files of ``--packages`` (default jax, flax,
optax, equinox, chex, orbax: JAX-heavy code, where ``jit``, ``vmap``, ``array(`` appear in nearly
every file) are copied to a temporary directory, so no tool can write into site-packages; or it is
``--tree``'s folders as they are (``bench/corpus.py`` lays out issue 18's: the HEADs of jax, flax,
warp, brax and mujoco_playground, tests and examples included, which the installed packages lack).
On that tree, side by side, each repetition running every tool once in a rotating order:

  read      a Python process that walks the tree and reads every byte (the floor)
  ast       a Python process that walks the tree and ``ast.parse``s every file, one process
  codemod   codemod run --dry-run --no-progress --no-cache TREE   (cold: default rules, no result cache)
            and the same with --jobs=1 (no process pool)
  @REV      codemod cold at git revision REV (--baseline REV: its codemods/ and cli/ laid out as
            jax_codemod first on PYTHONPATH), to compare a branch with main in the same run
  warm      codemod run --dry-run --no-progress --cache-dir C TREE (C filled by a run before timing)
  ruff      ruff check --no-cache --isolated TREE                   (ruff's default rules)
  libcst    python -m libcst.tool codemod noop.NOOPCommand ...      (only with --libcst-files N; N=0: all)

Then the same cold comparison on 1x/2x/4x copies of the tree (``--scales``; cost should grow
linearly) and on ``--tiny`` small files (20,000 by default; startup and per-file overhead).

Reported: medians of CPU time (user+sys of the whole process tree: the primary figure on a busy
shared machine) and of wall time, and the peak RSS of the largest process in the tree (a fresh
wrapper per run reads RUSAGE_CHILDREN). Then, per rule, how many files its prefilter passes
against how many have findings (all six rules, opt-in ones included, from one
``--select ALL --format json`` run). ``--per-rule`` adds where a cold ``-j 1`` run spends its CPU:
decode+parse and each rule's ``check``, measured in this process on the files some rule's prefilter
passes (rules run in registry order; an analysis two rules share is charged to the first that asks).

Changes from the earlier benchmark: the default tree is JAX-heavy instead of jax+torch+numpy
(``--packages`` brings that back); libcst runs only when ``--libcst-files`` is given, since one
libcst pass costs more than everything else together; figures are medians, not bests.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_PACKAGES = ("jax", "flax", "optax", "equinox", "chex", "orbax")

# Runs one command and reports its wall time, CPU time and the largest RSS in its tree.
_MEASURE = """
import json, resource, subprocess, sys, time
start = time.perf_counter()
done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
wall = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss_kb": usage.ru_maxrss,
                  "rc": done.returncode, "stderr": done.stderr.decode(errors="replace")[-2000:]}))
"""

# The floors: what any tool that reads (or parses) every file must pay, in one Python process.
_WALK = """
import os, sys
def files(roots):
    for root in roots:
        for directory, dirs, names in os.walk(root):
            dirs.sort()
            for name in sorted(names):
                if name.endswith(".py"):
                    yield os.path.join(directory, name)
"""
_READ = _WALK + """
total = 0
for path in files(sys.argv[1:]):
    with open(path, "rb") as handle:
        total += len(handle.read())
"""
_PARSE = _WALK + """
import ast, warnings
warnings.simplefilter("ignore")
for path in files(sys.argv[1:]):
    with open(path, "rb") as handle:
        source = handle.read()
    try:
        ast.parse(source, filename=path)
    except (SyntaxError, ValueError):
        pass
"""


@dataclass
class Timing:
    name: str
    command: list[str]
    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)
    rss_kb: int = 0
    scale: float = 1.0  # > 1: measured on a subset, extrapolated by bytes
    fixed_wall: float = 0.0  # startup, not scaled when extrapolating
    fixed_cpu: float = 0.0
    env: dict | None = None  # instead of the run's environment (a baseline revision's package)

    def _extrapolate(self, measured: float, fixed: float) -> float:
        return fixed + max(0.0, measured - fixed) * self.scale

    @property
    def wall(self) -> float:
        return self._extrapolate(statistics.median(self.walls), self.fixed_wall)

    @property
    def cpu(self) -> float:
        return self._extrapolate(statistics.median(self.cpus), self.fixed_cpu)

    # Kept for callers of the earlier benchmark's JSON.
    @property
    def best(self) -> float:
        return self._extrapolate(min(self.walls), self.fixed_wall)

    def to_json(self) -> dict:
        return {
            "command": self.command, "walls": self.walls, "cpus": self.cpus, "rss_kb": self.rss_kb,
            "wall_median": self.wall, "cpu_median": self.cpu, "best": self.best, "scale": self.scale,
        }


def measure(command: list[str], ok_codes=(0, 1), env=None) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, *command], capture_output=True, text=True, env=env, check=False
    )
    result = json.loads(done.stdout)
    if result["rc"] not in ok_codes:
        raise SystemExit(f"{' '.join(command)} exited {result['rc']}:\n{result['stderr']}")
    return result


def run_side_by_side(timings: list[Timing], repeat: int, env, label: str) -> None:
    """Every tool once per repetition, the order rotated, so load on a shared machine hits all alike."""
    for round_number in range(repeat):
        shift = round_number % len(timings)
        for timing in timings[shift:] + timings[:shift]:
            result = measure(timing.command, env=timing.env or env)
            timing.walls.append(result["wall"])
            timing.cpus.append(result["cpu"])
            timing.rss_kb = max(timing.rss_kb, result["rss_kb"])
            print(f"  {label} {timing.name}: {result['wall']:.2f} s wall, {result['cpu']:.2f} s CPU, "
                  f"{result['rss_kb'] / 1024:.0f} MiB", file=sys.stderr)


def codemod_command(env) -> list[str]:
    """``codemod run --dry-run``, with its result cache off where it has one (ruff's is off too)."""
    command = [sys.executable, "-m", "jax_codemod.cli", "run", "--dry-run", "--no-progress"]
    usage = subprocess.run([*command, "--help"], capture_output=True, text=True, env=env, check=False).stdout
    return [*command, "--no-cache"] if "--no-cache" in usage else command


def copy_sources(packages: list[str], destination: Path) -> list[Path]:
    """Copy each package's *.py files (the only files any of the tools read) under ``destination``."""
    roots = []
    for name in packages:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            raise SystemExit(f"package {name} is not installed (pip install it, or leave it out of --packages)")
        target = destination / name
        for location in spec.submodule_search_locations:  # several for a namespace package (orbax)
            source = Path(location)
            for path in source.rglob("*.py"):
                copy = target / path.relative_to(source)
                copy.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, copy)
        roots.append(target)
    return roots


def replicate(roots: list[Path], destination: Path, copies: int) -> list[Path]:
    """``copies`` copies of the tree under ``destination`` (hard links where the file system allows)."""
    result = []
    for number in range(copies):
        for root in roots:
            target = destination / f"copy{number}" / root.name
            for path in root.rglob("*.py"):
                copy = target / path.relative_to(root)
                copy.parent.mkdir(parents=True, exist_ok=True)
                try:
                    os.link(path, copy)
                except OSError:
                    shutil.copyfile(path, copy)
        result.append(destination / f"copy{number}")
    return result


def baseline_package(revision: str, destination: Path) -> Path:
    """``revision``'s package laid out as ``jax_codemod`` under ``destination`` (for PYTHONPATH)."""
    import io
    import tarfile

    archive = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", revision, "codemods", "cli"],
                             capture_output=True, check=False)
    if archive.returncode:
        raise SystemExit(f"git archive {revision}: {archive.stderr.decode(errors='replace')}")
    source = destination / "src"
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(source, filter="data")
    package = destination / "pkg" / "jax_codemod"
    shutil.copytree(source / "codemods", package)
    shutil.copytree(source / "cli", package / "cli")
    env = dict(os.environ, PYTHONPATH=str(destination / "pkg"))
    where = subprocess.run([sys.executable, "-c", "import jax_codemod; print(jax_codemod.__file__)"],
                           capture_output=True, text=True, env=env, check=False).stdout.strip()
    if not where.startswith(str(package)):
        raise SystemExit(f"the baseline does not shadow the installed package (imports {where or 'nothing'})")
    return destination / "pkg"


# Small files as a big repository has them: most import nothing of interest, some use jax.
_TINY = (
    "import os\n\n\ndef helper_{n}(path):\n    return os.path.join(path, 'x{n}')\n",
    "CONSTANT_{n} = {n}\n__all__ = ['CONSTANT_{n}']\n",
    "from dataclasses import dataclass\n\n\n@dataclass\nclass Config{n}:\n    size: int = {n}\n",
    "import jax\nimport jax.numpy as jnp\n\n\n@jax.jit\ndef step_{n}(x):\n    return jnp.sin(x) * {n}\n",
    "import numpy as np\n\n\ndef load_{n}(x):\n    return np.asarray(x).reshape(-1)\n",
)


def tiny_tree(destination: Path, count: int) -> Path:
    for n in range(count):
        path = destination / f"pkg{n // 500}" / f"mod_{n}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_TINY[n % len(_TINY)].format(n=n))
    return destination


def python_files(roots) -> list[Path]:
    return sorted(p for root in roots for p in Path(root).rglob("*.py"))


def total_bytes(paths) -> int:
    return sum(p.stat().st_size for p in paths)


def spread_subset(files: list[Path], count: int) -> list[Path]:
    step = max(1, len(files) // count)
    return files[::step][:count]


# Prefilter against findings -------------------------------------------------------------------


def prefilter_table(files: list[Path], tree: list[str], env) -> tuple[list[dict], int]:
    """Per rule: files and bytes its prefilter passes, files with findings; plus how many files get parsed."""
    sys.path.insert(0, str(REPO))
    from jax_codemod.rules import RULES

    rules = [rule() for rule in RULES]
    passed: Counter = Counter()
    passed_bytes: Counter = Counter()
    parsed_default = 0
    for path in files:
        source = path.read_bytes()
        hit = False
        for rule in rules:
            if rule.prefilter(source):
                passed[rule.CODE] += 1
                passed_bytes[rule.CODE] += len(source)
                hit = hit or rule.DEFAULT_ENABLED
        parsed_default += hit
    command = [sys.executable, "-m", "jax_codemod.cli", "run", "--check", "--no-cache", "--no-progress",
               "--select", "ALL", "--format", "json", *tree]
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    document = json.loads(done.stdout)
    with_findings: dict[str, set] = {rule.CODE: set() for rule in rules}
    counts: Counter = Counter()
    for finding in document["findings"]:
        with_findings[finding["code"]].add(finding["path"])
        counts[finding["code"]] += 1
    table = [
        {
            "code": rule.CODE, "name": rule.NAME, "default": rule.DEFAULT_ENABLED,
            "passed": passed[rule.CODE], "passed_bytes": passed_bytes[rule.CODE],
            "files_with_findings": len(with_findings[rule.CODE]), "findings": counts[rule.CODE],
        }
        for rule in rules
    ]
    return table, parsed_default


def per_rule_profile(files: list[Path], repeat: int, roots: list[str] | None = None) -> list[dict]:
    """CPU of a cold -j 1 check by part (median of ``repeat``), the way the engine runs it:
    discovery, reading (``runner._read``), the one combined prefilter (``active_rules``), decode
    (``ast.parse`` of the whole file, charged apart, only when a rule reads ``ctx.tree``: JAX001's
    partial parses count as JAX001), each rule's ``check`` on the files its prefilter passes, freeing each file's
    context (``release``), and the young-generation collections. Start-up imports and output are
    not counted (``bench/startup.py`` measures start-up)."""
    import gc
    import warnings

    sys.path.insert(0, str(REPO))
    from jax_codemod.analysis.context import FileContext
    from jax_codemod.engine import runner
    from jax_codemod.engine.discovery import discover
    from jax_codemod.engine.pipeline import Settings, _parse, active_rules, check_order, decode
    from jax_codemod.engine.resolve import Options, resolve

    settings = resolve(roots or [str(files[0].parent)], Options())[0].settings
    rules = tuple(rule for rule in settings.rules if rule.DEFAULT_ENABLED)
    settings = Settings(rules=rules)
    paths = [str(p) for p in files]
    rounds: list[Counter] = []
    found: Counter = Counter()
    checked: Counter = Counter()
    for round_number in range(repeat):
        spent: Counter = Counter()
        clock = time.process_time
        start = clock()
        if roots:
            t0 = clock()
            discover(roots)
            spent["discovery"] += clock() - t0
        for path in paths:
            t0 = clock()
            source, _error, _identity = runner._read(path, settings)
            spent["read"] += clock() - t0
            if source is None:
                continue
            t0 = clock()
            active = active_rules(source, rules)
            spent["prefilter"] += clock() - t0
            if not active:
                continue
            gc.disable()
            try:
                t0 = clock()
                text = decode(source)
                spent["decode"] += clock() - t0
                parsing = [0.0]

                def parse(source=source, text=text, path=path, parsing=parsing, clock=clock):
                    # As the engine does: the whole file is parsed when a rule first reads ctx.tree.
                    t1 = clock()
                    try:
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            return _parse(source, text, path)
                    finally:
                        parsing[0] += clock() - t1

                ctx = FileContext(path, text, parse=parse)
                for rule in check_order(active):  # as the engine runs them
                    t0 = clock()
                    before = parsing[0]
                    try:
                        findings = rule.check(ctx)
                    except Exception:  # noqa: BLE001 -- the engine reports these; here only time counts
                        findings = []
                    spent[rule.CODE] += clock() - t0 - (parsing[0] - before)
                    if round_number == 0:
                        checked[rule.CODE] += 1
                        found[rule.CODE] += len(findings)
                spent["whole-file ast.parse"] += parsing[0]
                if round_number == 0 and ctx.has_tree:
                    checked["whole-file ast.parse"] += 1
                t0 = clock()
                ctx.release()
                del ctx, text
                spent["release"] += clock() - t0
            finally:
                gc.enable()
                t0 = clock()
                gc.collect(0)
                spent["gc"] += clock() - t0
        spent["total"] = clock() - start
        rounds.append(spent)
    keys = ["discovery", "read", "prefilter", "decode", "whole-file ast.parse", *[rule.CODE for rule in rules], "release", "gc",
            "total"]
    return [
        {"part": key, "cpu": statistics.median(r[key] for r in rounds), "files": checked.get(key),
         "findings": found.get(key)}
        for key in keys
    ]


# Report ---------------------------------------------------------------------------------------


def table(timings: list[Timing], reference: Timing, floor: Timing) -> list[str]:
    lines = [
        f"| tool | CPU | wall | peak RSS | CPU vs {reference.name} | CPU vs {floor.name} |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for t in timings:
        lines.append(
            f"| {t.name} | {t.cpu:.2f} s | {t.wall:.2f} s | {t.rss_kb / 1024:.0f} MiB | "
            f"{t.cpu / reference.cpu:.2f}x | {t.cpu / floor.cpu:.1f}x |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--packages", nargs="+", default=list(DEFAULT_PACKAGES))
    parser.add_argument("--tree", nargs="+", type=Path, metavar="DIR",
                        help="time these folders as they are (read only; e.g. bench/corpus.py's) instead of "
                             "laying a tree out from --packages")
    parser.add_argument("--repeat", type=int, default=5, help="repetitions of the side-by-side run")
    parser.add_argument("--scales", type=int, nargs="*", default=[1, 2, 4], help="copies of the tree to time")
    parser.add_argument("--scale-repeat", type=int, default=3)
    parser.add_argument("--tiny", type=int, default=20000, help="small files to time (0: skip)")
    parser.add_argument("--jobs", "-j", type=int, help="codemod's -j (default: its own, the CPU count)")
    parser.add_argument("--per-rule", action="store_true", help="also split a -j 1 run's CPU by rule")
    parser.add_argument("--libcst-files", type=int, help="also time libcst's NOOP codemod on N files (0: all)")
    parser.add_argument("--libcst-repeat", type=int, default=1)
    parser.add_argument("--baseline", metavar="REV", action="append", default=[],
                        help="also time codemod cold at this git revision (repeatable)")
    parser.add_argument("--json", help="also write the figures here")
    parser.add_argument("--no-bytecode-cache", action="store_true",
                        help="keep PYTHONDONTWRITEBYTECODE as it is set: runs then recompile the sources "
                             "that have no .pyc yet (a baseline revision's always; this checkout's unless "
                             "an earlier run wrote them), so compare revisions only without this flag")
    args = parser.parse_args(argv)

    ruff = shutil.which("ruff", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]))
    if ruff is None:
        raise SystemExit("ruff is not installed")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    bytecode = "kept as set" if args.no_bytecode_cache else "cached"
    if not args.no_bytecode_cache:
        # As bench/startup.py: pip compiles an installed package's bytecode, so no installed copy
        # recompiles its sources on every run (~0.09 s of codemod's, and again in each worker for
        # what it imports). With PYTHONDONTWRITEBYTECODE set every timed run would.
        bytecode = "cached" if "PYTHONDONTWRITEBYTECODE" not in env else "cached (PYTHONDONTWRITEBYTECODE unset)"
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    figures: dict = {"python": platform.python_version(), "cpus": os.cpu_count(), "packages": args.packages,
                     "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    out: list[str] = []
    with tempfile.TemporaryDirectory(prefix="codemod-bench-") as scratch_name:
        scratch = Path(scratch_name)
        if args.tree:
            roots = [path.resolve() for path in args.tree]
            described = " + ".join(str(path) for path in args.tree)
        else:
            roots = copy_sources(args.packages, scratch / "tree")
            described = " + ".join(args.packages)
        figures["tree"] = described
        files = python_files(roots)
        tree_bytes = total_bytes(files)
        tree = [str(root) for root in roots]
        print(f"tree: {described}: {len(files)} files, {tree_bytes / 2**20:.1f} MiB", file=sys.stderr)
        codemod = codemod_command(env) + ([f"--jobs={args.jobs}"] if args.jobs else [])
        warm_command = [c for c in codemod if c != "--no-cache"] + ["--cache-dir", str(scratch / "cache")]
        measure([*warm_command, *tree], env=env)  # fill the cache

        main_timings = [
            Timing("read all bytes", [sys.executable, "-c", _READ, *tree]),
            Timing("ast.parse all", [sys.executable, "-c", _PARSE, *tree]),
            Timing("codemod cold", [*codemod, *tree]),
            Timing("codemod cold -j 1", [*codemod, "--jobs=1", *tree]),
            Timing("codemod warm", [*warm_command, *tree]),
            Timing("ruff", [ruff, "check", "--no-cache", "--isolated", *tree]),
        ]
        for number, revision in enumerate(args.baseline):
            package = baseline_package(revision, scratch / f"baseline{number}")
            main_timings.insert(3 + number, Timing(f"codemod cold @{revision}", [*codemod, *tree],
                                                   env=dict(env, PYTHONPATH=str(package))))
        for timing in main_timings:  # write every revision's .pyc files before timing (and warm the page cache)
            if "jax_codemod.cli" in timing.command:
                measure(timing.command, env=timing.env or env)
        run_side_by_side(main_timings, args.repeat, env, "1x")
        floor, cold, ruff_timing = main_timings[0], main_timings[2], main_timings[-1]
        out += [
            (f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPUs, "
            f"{figures['date']}; tree: {described}, {len(files)} files, "
            f"{tree_bytes / 2**20:.1f} MiB; medians of {args.repeat}, tools interleaved; Python bytecode {bytecode}"),
            "",
            *table(main_timings, ruff_timing, floor),
        ]
        if args.libcst_files is not None:
            out += ["", *libcst_lines(args, files, tree_bytes, scratch, cold)]
        figures["main"] = {t.name: t.to_json() for t in main_timings}

        ratio = cold.cpu / ruff_timing.cpu
        floor_ratio = cold.cpu / floor.cpu
        out += [
            "",
            (f"codemod cold / ruff (CPU) = {ratio:.2f} (target <= 1.0): {'met' if ratio <= 1.0 else 'MISSED'}; "
            f"wall {cold.wall / ruff_timing.wall:.2f}"),
            (f"codemod cold / reading floor (CPU) = {floor_ratio:.1f} (target <= 3): "
            f"{'met' if floor_ratio <= 3 else 'MISSED'}"),
            (f"peak RSS codemod {cold.rss_kb / 1024:.0f} MiB, ruff {ruff_timing.rss_kb / 1024:.0f} MiB (target <= ruff): "
            f"{'met' if cold.rss_kb <= ruff_timing.rss_kb else 'MISSED'}"),
        ]

        scales = [s for s in args.scales if s > 0]
        if scales:
            out += ["", f"Copies of the tree (cold; medians of {args.scale_repeat}; CPU per MiB should stay flat):", "",
                    "| copies | MiB | codemod CPU | s/MiB | ruff CPU | s/MiB | read CPU | codemod peak RSS | ruff peak RSS |",
                    "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
            figures["scales"] = {}
            for copies in scales:
                scale_roots = [str(r) for r in replicate(roots, scratch / f"x{copies}", copies)]
                mib = tree_bytes * copies / 2**20
                timings = [
                    Timing("codemod", [*codemod, *scale_roots]),
                    Timing("ruff", [ruff, "check", "--no-cache", "--isolated", *scale_roots]),
                    Timing("read", [sys.executable, "-c", _READ, *scale_roots]),
                ]
                run_side_by_side(timings, args.scale_repeat, env, f"{copies}x")
                c, r, f = timings
                out.append(f"| {copies} | {mib:.0f} | {c.cpu:.2f} s | {c.cpu / mib:.3f} | {r.cpu:.2f} s | "
                           f"{r.cpu / mib:.3f} | {f.cpu:.2f} s | {c.rss_kb / 1024:.0f} MiB | {r.rss_kb / 1024:.0f} MiB |")
                figures["scales"][copies] = {t.name: t.to_json() for t in timings}
                shutil.rmtree(scratch / f"x{copies}")

        if args.tiny:
            tiny = str(tiny_tree(scratch / "tiny", args.tiny))
            timings = [
                Timing("read all bytes", [sys.executable, "-c", _READ, tiny]),
                Timing("ast.parse all", [sys.executable, "-c", _PARSE, tiny]),
                Timing("codemod cold", [*codemod, tiny]),
                Timing("ruff", [ruff, "check", "--no-cache", "--isolated", tiny]),
            ]
            run_side_by_side(timings, args.scale_repeat, env, "tiny")
            out += ["", (f"{args.tiny} tiny files ({total_bytes(python_files([tiny])) / 2**20:.1f} MiB; "
                    f"medians of {args.scale_repeat}):"), "", *table(timings, timings[3], timings[0])]
            figures["tiny"] = {t.name: t.to_json() for t in timings}

        prefilters, parsed = prefilter_table(files, tree, env)
        figures["prefilters"] = prefilters
        out += ["", (f"Prefilters on the 1x tree: {parsed} of {len(files)} files pass a default rule's prefilter "
                "and are parsed."), "",
                "| rule | default | files passed | MiB passed | files with findings | findings |",
                "| --- | --- | ---: | ---: | ---: | ---: |"]
        for row in prefilters:
            out.append(f"| {row['code']} {row['name']} | {'yes' if row['default'] else 'opt-in'} | {row['passed']} | "
                       f"{row['passed_bytes'] / 2**20:.1f} | {row['files_with_findings']} | {row['findings']} |")

        if args.per_rule:
            parts = per_rule_profile(files, max(1, min(args.repeat, 3)), tree)
            figures["per_rule"] = parts
            total = next(p["cpu"] for p in parts if p["part"] == "total")
            out += ["", "Where a cold -j 1 check spends its CPU (in process, as the engine runs it; start-up excluded):", "",
                    "| part | CPU | share | files checked | findings |", "| --- | ---: | ---: | ---: | ---: |"]
            for p in parts:
                out.append(f"| {p['part']} | {p['cpu']:.2f} s | {p['cpu'] / total:.0%} | "
                           f"{'' if p['files'] is None else p['files']} | {'' if p['findings'] is None else p['findings']} |")

    print("\n".join(out))
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))
    return 0


def libcst_lines(args, files: list[Path], tree_bytes: int, scratch: Path, codemod: Timing) -> list[str]:
    subset = files if args.libcst_files == 0 else spread_subset(files, args.libcst_files)
    scale = tree_bytes / total_bytes(subset)
    command = [sys.executable, "-m", "libcst.tool", "codemod", "noop.NOOPCommand"]
    libcst = Timing("libcst", [*command, *map(str, subset)], scale=scale)
    run_side_by_side([libcst], args.libcst_repeat, None, "1x")
    note = "whole tree"
    if scale != 1:
        # Startup (imports, worker pool) is paid once whatever the tree: measure it on
        # an empty file and extrapolate only the rest.
        empty = scratch / "empty" / "empty.py"
        empty.parent.mkdir()
        empty.write_text("")
        startup = Timing("libcst startup", [*command, str(empty)])
        run_side_by_side([startup], args.libcst_repeat, None, "1x")
        libcst.fixed_wall, libcst.fixed_cpu = min(startup.walls), min(startup.cpus)
        note = (f"run on {len(subset)} of {len(files)} files ({total_bytes(subset) / 2**20:.1f} MiB); "
                f"time beyond its {libcst.fixed_wall:.1f} s startup extrapolated x{scale:.0f} by bytes")
    return [(f"libcst NOOP ({note}): {libcst.wall:.2f} s wall, {libcst.cpu:.2f} s CPU = "
            f"{libcst.wall / codemod.wall:.0f}x codemod cold's wall")]


if __name__ == "__main__":
    sys.exit(main())
