"""The test figures of docs/versions.md (linked from the README), written from recorded runs instead of typed.

    python3 scripts/readme_figures.py record ENV LOG   # .ci/run: ENV's pytest summary from its log
    python3 scripts/readme_figures.py update           # keep this run's records, write them into docs/versions.md
    python3 scripts/readme_figures.py check            # exit 1 if docs/versions.md says otherwise

A record holds pytest's own summary line of one environment's run (``4516 passed, 9 skipped``),
the commit it ran at and the date. ``record`` writes it among this run's pending records
(``.ci/logs/results/``, not committed), so a suite that runs later in the same ``.ci/run`` still
compares the README with the committed records. ``update``, at the end of the run, moves the pending
records to ``.ci/results/ENV.json`` (committed with the README), puts each record's summary in the
last column of its row of the README's table (the row whose first cell starts with ENV) and the
newest record's date in the column's heading; rows without a record keep what they say.
``tests/test_readme_figures.py`` runs ``check``. Standard library only: .ci/run calls it with any
Python.
"""

from __future__ import annotations

import datetime
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / ".ci" / "results"
PENDING = ROOT / ".ci" / "logs" / "results"
# The page that holds the CI figures table (the README links to it).
README = ROOT / "docs" / "versions.md"
# pytest's last line: "==== 4516 passed, 9 skipped, 1 xfailed in 812.34s (0:13:32) ====" (-q: no '=').
_SUMMARY = re.compile(r"^=*\s*((?:\d+ (?:passed|failed|skipped|xfailed|xpassed|errors?|deselected|warnings?)"
                      r"(?:, )?)+) in [\d.]+s", re.MULTILINE)
_HEADING = re.compile(r"^(\| environment \|.*\| result) \([^)]*\) \|$", re.MULTILINE)


def summary_of(log: str) -> str | None:
    """pytest's summary counts from a log (its last summary line), without warnings."""
    found = _SUMMARY.findall(log)
    if not found:
        return None
    parts = [part for part in found[-1].rstrip(", ").split(", ") if "warning" not in part]
    return ", ".join(parts)


def record(env: str, log_path: str) -> int:
    summary = summary_of(Path(log_path).read_text(errors="replace"))
    if summary is None:
        print(f"readme_figures: no pytest summary in {log_path}", file=sys.stderr)
        return 1
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                            check=False).stdout.strip()
    PENDING.mkdir(parents=True, exist_ok=True)
    document = {"env": env, "summary": summary, "commit": commit, "date": datetime.date.today().isoformat()}
    (PENDING / f"{env}.json").write_text(json.dumps(document, indent=2) + "\n")
    return 0


def records() -> list[dict]:
    return [json.loads(path.read_text()) for path in sorted(RESULTS.glob("*.json"))]


def rendered(readme: str, found: list[dict]) -> str:
    lines = readme.split("\n")
    for entry in found:
        for index, line in enumerate(lines):
            cells = line.split(" | ")
            first = cells[0][2:] if line.startswith("| ") else ""
            if first == entry["env"] or first.startswith(entry["env"] + " "):
                cells[-1] = f"{entry['summary']} (at {entry['commit']}) |"
                lines[index] = " | ".join(cells)
                break
    text = "\n".join(lines)
    if found:
        newest = max(entry["date"] for entry in found)
        text = _HEADING.sub(lambda match: f"{match.group(1)} ({newest}) |", text)
    return text


def main(argv: list[str]) -> int:
    if argv[:1] == ["record"] and len(argv) == 3:
        return record(argv[1], argv[2])
    if argv == ["update"]:
        RESULTS.mkdir(parents=True, exist_ok=True)
        for pending in sorted(PENDING.glob("*.json")):
            pending.replace(RESULTS / pending.name)
        README.write_text(rendered(README.read_text(), records()))
        return 0
    if argv == ["check"]:
        current = README.read_text()
        if rendered(current, records()) != current:
            print("docs/versions.md's CI figures differ from .ci/results: run python3 scripts/readme_figures.py update",
                  file=sys.stderr)
            return 1
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
