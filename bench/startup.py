"""Start-up time: what a pre-commit hook pays on every commit.

    python bench/startup.py             # medians of 10, side by side: wall and CPU time
    python bench/startup.py --repeat 20

In one run, interleaved (so a busy machine slows all three alike), each repeated:

  click    python3 -c "import click"          the floor for any click application
  codemod  codemod run --check FILE           FILE: one clean file, no trigger for any rule
           codemod run --check FILE2          FILE2: clean, but with a trigger of one rule
  ruff     ruff check --no-cache FILE         (if ruff is installed)

``python3`` and ``codemod`` are the ones of the running interpreter's environment, so both
pay the same interpreter start-up and site-packages. Target (issue 15): codemod at most 1.5x
the click floor. Also reported: whether libcst was imported (it must not be, for a clean
file) — from ``python -X importtime``.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Nothing for codemod (or ruff) to say about either. The first names none of any rule's trigger
# bytes, like most files a pre-commit hook is handed; the second has one of JAX001's (`array(`),
# so that rule is imported and asked, and finds nothing.
CLEAN = '''"""Configuration loading."""

import json


def load(path):
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)
'''
CLEAN_WITH_TRIGGER = '''"""Array helpers."""

import numpy as np


def total(values):
    return np.asarray(values).sum()
'''
TARGET = 1.5


def timed(command: list[str], cwd: str, env: dict) -> tuple[float, float]:
    """(wall, CPU) seconds of one run; CPU (user+sys of the child) is steadier on a busy machine."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0,):
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}: {done.stderr.decode()[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def codemod_command() -> list[str]:
    script = Path(sys.executable).with_name("codemod")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "jax_codemod.cli"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args(argv)
    scratch = tempfile.mkdtemp(prefix="codemod-startup-")
    try:
        Path(scratch, "clean.py").write_text(CLEAN)
        Path(scratch, "trigger.py").write_text(CLEAN_WITH_TRIGGER)
        env = dict(os.environ, CI="1")  # no progress bar, as in a hook
        env.pop("CODEMOD_CACHE_DIR", None)
        # pip compiles an installed package's bytecode; without .pyc files every run would
        # recompile codemod's sources (~70 ms), which no installed copy does.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        commands = {
            "click": [sys.executable, "-c", "import click"],
            "codemod": [*codemod_command(), "run", "--check", "clean.py"],
            "codemod (trigger)": [*codemod_command(), "run", "--check", "trigger.py"],
        }
        ruff = shutil.which("ruff") or (str(Path(sys.executable).with_name("ruff"))
                                        if Path(sys.executable).with_name("ruff").exists() else None)
        if ruff:
            commands["ruff"] = [ruff, "check", "--no-cache", "clean.py"]
        for command in commands.values():  # warm the page cache and the .pyc files
            timed(command, scratch, env)
        times: dict[str, list[float]] = {name: [] for name in commands}
        cpu: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.repeat):
            for name, command in commands.items():
                wall, used = timed(command, scratch, env)
                times[name].append(wall)
                cpu[name].append(used)
        imported = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "jax_codemod.cli", "run", "--check", "clean.py"],
            cwd=scratch, env=env, capture_output=True, text=True, check=False,
        ).stderr
        libcst = any(line.rstrip().endswith("| libcst") for line in imported.splitlines())
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    floor = statistics.median(times["click"])
    floor_cpu = statistics.median(cpu["click"])
    print(f"medians of {args.repeat} runs, {sys.implementation.name} {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    print(f"{'command':<44} {'wall':>7} {'min':>7} {'vs click':>9} {'CPU':>7} {'vs click':>9}")
    for name, command in commands.items():
        shown = " ".join(Path(command[0]).name if i == 0 else part for i, part in enumerate(command))
        median = statistics.median(times[name])
        used = statistics.median(cpu[name])
        print(f"{shown:<44} {median * 1000:>5.0f}ms {min(times[name]) * 1000:>5.0f}ms {median / floor:>8.2f}x "
              f"{used * 1000:>5.0f}ms {used / floor_cpu:>8.2f}x")
    ratio = statistics.median(times["codemod"]) / floor
    print(f"libcst imported on a clean file: {'yes' if libcst else 'no'}")
    cpu_ratio = statistics.median(cpu["codemod"]) / floor_cpu
    print(f"target: codemod <= {TARGET}x the click floor: {'met' if ratio <= TARGET else 'NOT met'} "
          f"(wall {ratio:.2f}x, CPU {cpu_ratio:.2f}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
