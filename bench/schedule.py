"""The pool's wall time, simulated from per-file costs: robust to a busy machine.

    python bench/schedule.py TREE [--jobs 2 4] [--repeat 3]

Each file's cost is measured in this process (``time.process_time``, medians of ``--repeat``):
reading it, the combined prefilter, and checking it where a rule's prefilter passes it. The
pool is then replayed as the engine runs it -- the parent reads and prefilters until
``PARALLEL_MIN_BYTES`` pass, the rest go to the workers unread, in ``runner._chunks`` order,
each chunk to the worker free first -- against the previous scheme (the parent reads and
prefilters every file, then the workers read again and check the files that passed, largest
first), and against the lower bound (the serial part, then the work spread evenly). Pool
start-up is a fixed ``--pool-start`` seconds in both.
"""

from __future__ import annotations

import argparse
import heapq
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from jax_codemod.engine import runner
from jax_codemod.engine.discovery import discover
from jax_codemod.engine.pipeline import active_rules
from jax_codemod.engine.resolve import Options, resolve


def costs(files: list[str], settings, repeat: int) -> dict[str, tuple[float, float, float, int, bool]]:
    """path -> (read, prefilter, check, size, passed)."""
    clock, rules = time.process_time, settings.rules
    samples: dict[str, list[tuple[float, float, float, int, bool]]] = {}
    for round_number in range(repeat + 1):  # the first round imports the rules: not counted
        for path in files:
            t0 = clock()
            source, _, _ = runner._read(path, settings)
            t1 = clock()
            active = active_rules(source, rules) if source is not None else ()
            t2 = clock()
            if active:
                runner._check_source(path, source, settings, None, active)
            t3 = clock()
            if round_number:
                samples.setdefault(path, []).append((t1 - t0, t2 - t1, t3 - t2, len(source or b""), bool(active)))
    return {path: (*(statistics.median(s[i] for s in runs) for i in range(3)), runs[0][3], runs[0][4])
            for path, runs in samples.items()}


def makespan(chunk_costs: list[float], jobs: int, start: float) -> float:
    free = [start] * jobs
    for cost in chunk_costs:
        heapq.heappush(free, heapq.heappop(free) + cost)
    return max(free)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree")
    parser.add_argument("--jobs", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--pool-start", type=float, default=0.05)
    args = parser.parse_args(argv)
    settings = resolve([args.tree], Options())[0].settings
    files = list(discover([args.tree]).files)
    cost = costs(files, settings, args.repeat)
    read, prefilter, check = (sum(c[i] for c in cost.values()) for i in range(3))
    print(f"{len(files)} files: read {read:.3f} s, prefilter {prefilter:.3f} s, check {check:.3f} s (CPU, in process)")
    passed = [(i, p, cost[p][3], 0, ()) for i, p in enumerate(files) if cost[p][4]]
    # Where the engine stops reading (runner.check_files).
    cut, held = len(files), 0
    for count, item in enumerate(passed, 1):
        held += item[2]
        if held >= runner.PARALLEL_MIN_BYTES and count >= 2:
            cut = item[0] + 1
            break
    prefix = [item for item in passed if item[0] < cut]
    unread = [(i, p, cost[p][3], None, None) for i, p in enumerate(files) if i >= cut]
    serial_old = read + prefilter
    serial_new = sum(cost[p][0] + cost[p][1] for p in files[:cut])

    def in_worker(item) -> float:
        c = cost[item[1]]
        return c[0] + c[2] + (c[1] if item[4] is None else 0.0)

    for jobs in args.jobs:
        old = makespan([sum(cost[i[1]][0] + cost[i[1]][2] for i in chunk) for chunk in runner._chunks(passed, jobs)],
                       jobs, serial_old + args.pool_start)
        new = makespan([sum(map(in_worker, chunk)) for chunk in runner._chunks(prefix + unread, jobs)],
                       jobs, serial_new + args.pool_start)
        bound = serial_new + args.pool_start + sum(map(in_worker, prefix + unread)) / jobs
        print(f"-j {jobs}: read-everything-first {old:.3f} s; now {new:.3f} s (parent reads {cut} files first); "
              f"lower bound {bound:.3f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
