"""Time codemod against ruff and libcst's NOOP codemod on the same tree.

    python bench/run.py                        # jax + torch + numpy, 3 repetitions
    python bench/run.py --repeat 5 --libcst-files 0   # libcst over the whole tree (slow)

The Python sources of the installed packages are copied to a temporary tree first, so
no tool can write into site-packages (libcst's codemod command writes files back). On
that tree, one after another, each repeated:

  codemod  python -m jax_codemod.cli run --dry-run --no-progress TREE      (default rules; --no-cache if it has a cache)
  ruff     ruff check --no-cache --isolated TREE               (ruff's default rules)
  libcst   python -m libcst.tool codemod noop.NOOPCommand ...  (parse + unparse each file)

A full libcst parse costs seconds per large file, so by default libcst runs on an
evenly spread subset of the files and its time for the whole tree is extrapolated by
source bytes (said so in the output); ``--libcst-files 0`` runs it on everything.

Reported: wall time (best and median of the repetitions), CPU time (user+sys of the
whole process tree, less sensitive to a busy machine), and peak RSS of the largest
single process in the tree (a fresh wrapper per run reads RUSAGE_CHILDREN).
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
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_PACKAGES = ("jax", "torch", "numpy")

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


@dataclass
class Timing:
    name: str
    command: list[str]
    walls: list[float]
    cpus: list[float]
    rss_kb: int
    scale: float = 1.0  # > 1: measured on a subset, extrapolated by bytes
    fixed_wall: float = 0.0  # startup, not scaled when extrapolating
    fixed_cpu: float = 0.0

    def _extrapolate(self, measured: float, fixed: float) -> float:
        return fixed + max(0.0, measured - fixed) * self.scale

    @property
    def best(self) -> float:
        return self._extrapolate(min(self.walls), self.fixed_wall)

    @property
    def median(self) -> float:
        return self._extrapolate(statistics.median(self.walls), self.fixed_wall)

    @property
    def cpu(self) -> float:
        return self._extrapolate(min(self.cpus), self.fixed_cpu)


def measure(command: list[str], ok_codes=(0, 1), env=None) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, *command], capture_output=True, text=True, env=env, check=False
    )
    result = json.loads(done.stdout)
    if result["rc"] not in ok_codes:
        raise SystemExit(f"{' '.join(command)} exited {result['rc']}:\n{result['stderr']}")
    return result


def run(name: str, command: list[str], repeat: int, env=None, scale: float = 1.0) -> Timing:
    walls, cpus, rss = [], [], 0
    for _ in range(repeat):
        result = measure(command, env=env)
        walls.append(result["wall"])
        cpus.append(result["cpu"])
        rss = max(rss, result["rss_kb"])
        print(f"  {name}: {result['wall']:.2f} s wall, {result['cpu']:.2f} s CPU", file=sys.stderr)
    return Timing(name, command, walls, cpus, rss, scale)


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
            raise SystemExit(f"package {name} is not installed")
        source = Path(next(iter(spec.submodule_search_locations)))
        target = destination / name
        for path in source.rglob("*.py"):
            copy = target / path.relative_to(source)
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, copy)
        roots.append(target)
    return roots


def spread_subset(roots: list[Path], count: int) -> list[Path]:
    files = sorted(p for root in roots for p in root.rglob("*.py"))
    step = max(1, len(files) // count)
    return files[::step][:count]


def total_bytes(paths) -> int:
    return sum(p.stat().st_size for p in paths)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--packages", nargs="+", default=list(DEFAULT_PACKAGES))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--libcst-files", type=int, default=120, help="files for libcst (0: all)")
    parser.add_argument("--libcst-repeat", type=int, default=1)
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args(argv)

    ruff = shutil.which("ruff", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]))
    if ruff is None:
        raise SystemExit("ruff is not installed")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    with tempfile.TemporaryDirectory(prefix="codemod-bench-") as scratch:
        roots = copy_sources(args.packages, Path(scratch))
        files = sorted(p for root in roots for p in root.rglob("*.py"))
        tree_bytes = total_bytes(files)
        tree = [str(root) for root in roots]
        print(f"tree: {', '.join(args.packages)}: {len(files)} files, {tree_bytes / 2**20:.1f} MiB", file=sys.stderr)

        codemod = run("codemod", [*codemod_command(env), *tree], args.repeat, env=env)
        ruff_timing = run("ruff", [ruff, "check", "--no-cache", "--isolated", *tree], args.repeat)
        subset = files if args.libcst_files == 0 else spread_subset(roots, args.libcst_files)
        scale = tree_bytes / total_bytes(subset)
        libcst_command = [sys.executable, "-m", "libcst.tool", "codemod", "noop.NOOPCommand"]
        libcst = run("libcst", [*libcst_command, *map(str, subset)], args.libcst_repeat, scale=scale)
        libcst_note = "whole tree"
        if scale != 1:
            # Startup (imports, worker pool) is paid once whatever the tree: measure it on
            # an empty file and extrapolate only the rest.
            empty = Path(scratch) / "empty" / "empty.py"
            empty.parent.mkdir()
            empty.write_text("")
            startup = run("libcst startup", [*libcst_command, str(empty)], args.libcst_repeat)
            libcst.fixed_wall, libcst.fixed_cpu = min(startup.walls), min(startup.cpus)
            libcst_note = (
                f"run on {len(subset)} of {len(files)} files ({total_bytes(subset) / 2**20:.1f} MiB); "
                f"time beyond its {libcst.fixed_wall:.1f} s startup extrapolated x{scale:.0f} by bytes"
            )

    print(report(args, len(files), tree_bytes, codemod, ruff_timing, libcst, libcst_note))
    if args.json:
        figures = {t.name: vars(t) | {"best": t.best} for t in (codemod, ruff_timing, libcst)}
        Path(args.json).write_text(json.dumps(figures, indent=2))
    return 0


def report(args, file_count, tree_bytes, codemod: Timing, ruff: Timing, libcst: Timing, libcst_note: str) -> str:
    lines = [
        (f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPUs; "
        f"tree: {' + '.join(args.packages)}, {file_count} files, {tree_bytes / 2**20:.0f} MiB; "
        f"best of {args.repeat} (median in brackets)"),
        "",
        "| tool | wall | CPU | peak RSS | vs codemod |",
        "| --- | --- | --- | --- | --- |",
    ]
    for timing, note in ((codemod, ""), (ruff, ""), (libcst, f" ({libcst_note})")):
        lines.append(
            f"| {timing.name}{note} | {timing.best:.2f} s ({timing.median:.2f} s) | {timing.cpu:.2f} s | "
            f"{timing.rss_kb / 1024:.0f} MiB | {timing.best / codemod.best:.1f}x |"
        )
    ruff_ratio = codemod.best / ruff.best
    libcst_ratio = libcst.best / codemod.best
    lines += [
        "",
        f"codemod / ruff = {ruff_ratio:.2f} (target <= 1.5): {'met' if ruff_ratio <= 1.5 else 'MISSED'}",
        f"libcst NOOP / codemod = {libcst_ratio:.0f}x (target >= 30x): {'met' if libcst_ratio >= 30 else 'MISSED'}",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
