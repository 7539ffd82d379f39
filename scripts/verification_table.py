"""Prints a per-rule pass/fail/skip table from the execution suite's JUnit XML."""

from __future__ import annotations

import re
import sys
from collections import Counter, defaultdict
from pathlib import Path
from xml.etree import ElementTree

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import jax_codemod


def main(path: str) -> int:
    modules = {rule.__module__.rsplit(".", 1)[1]: rule for rule in jax_codemod.RULES}
    counts: dict[str, Counter] = defaultdict(Counter)
    for case in ElementTree.parse(path).getroot().iter("testcase"):
        match = re.search(r"\[([a-z_]+)-", case.get("name", ""))
        rule = modules.get(match.group(1)) if match else None
        key = f"{rule.CODE} {rule.NAME}" if rule else "other"
        outcome = "passed"
        if case.find("skipped") is not None:
            outcome = "skipped"
        elif case.find("failure") is not None or case.find("error") is not None:
            outcome = "failed"
        counts[key][outcome] += 1
    print("| rule | passed | failed | skipped |")
    print("| --- | --- | --- | --- |")
    for key in sorted(counts):
        c = counts[key]
        print(f"| {key} | {c['passed']} | {c['failed']} | {c['skipped']} |")
    return 1 if any(c["failed"] for c in counts.values()) else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
