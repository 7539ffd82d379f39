"""Runs the whole test suite on every JAX release the README's version matrix names, and prints
the README's matrix table (and the skips, with their reasons) from the JUnit XML of each run.

    python scripts/jax_matrix.py                      # the whole matrix (about an hour on 2 cores)
    python scripts/jax_matrix.py 0.4.30 0.6.2         # some releases, on Python 3.11
    python scripts/jax_matrix.py 3.12:newest          # PYTHON:JAX; "newest" lets pip choose

Each environment is a fresh virtualenv under ``.ci/envs/matrix`` (or ``--envs``), installed from
the wheel directory ``.ci/run`` uses (``$CODEMOD_CI_WHEELS``, default ``.ci/wheels``): what is not
there yet is downloaded into it once. The table goes to stdout, the progress to stderr; the
exit status is 1 when any environment failed a test or could not be installed.
"""

from __future__ import annotations

import argparse
import glob
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from xml.etree import ElementTree

ROOT = Path(__file__).resolve().parent.parent
# The matrix of issue 35: the oldest supported release, one per minor series up to each release
# where a fact of codemods/analysis/jax_versions.py changes, and the newest for each Python.
MATRIX = ("0.4.30", "0.4.38", "0.5.3", "0.6.2", "0.7.0", "0.7.2", "0.8.1", "newest", "3.12:newest", "3.13:newest")
TORCH = "torch==2.13.0"
TEST_DEPS = ("pytest", "syrupy", "hypothesis", "hypothesmith", "numpy", "pre-commit", "jsonschema", "pyyaml",
             "ruff", "libcst", "click", "pathspec", "all-repos", "setuptools")


def find_python(version: str) -> str:
    """An interpreter of ``version`` (X.Y) that runs: pyenv's, else pythonX.Y on PATH."""
    for candidate in [*sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{version}.*/bin/python"))),
                      f"python{version}"]:
        try:
            subprocess.run([candidate, "-c", "import sys"], check=True, capture_output=True)
            return candidate
        except (OSError, subprocess.CalledProcessError):
            continue
    raise SystemExit(f"jax_matrix: no Python {version} found")


def install(python: str, env: Path, jax: str, wheels: Path) -> tuple[bool, str]:
    pins = ["jax", "jaxlib"] if jax == "newest" else [f"jax=={jax}", f"jaxlib=={jax}"]
    requirements = [TORCH, *pins, *TEST_DEPS]
    pip = str(env / "bin" / "pip")
    steps = [
        [python, "-m", "venv", "--clear", str(env)],
        [pip, "download", "-q", "-d", str(wheels), *requirements],
        [pip, "install", "-q", "--no-index", "--find-links", str(wheels), *requirements],
        [pip, "install", "-q", "--no-deps", "--no-build-isolation", "-e", str(ROOT)],
    ]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, check=False)
        if done.returncode:
            last = (done.stderr or done.stdout).strip().splitlines()
            return False, last[-1] if last else f"{step[0]} exited {done.returncode}"
    return True, ""


def installed_jax(env: Path) -> str:
    probe = "import sys; from importlib import metadata as m; print(sys.version.split()[0], m.version('jax'))"
    done = subprocess.run([str(env / "bin" / "python"), "-c", probe], capture_output=True, text=True, check=False)
    return done.stdout.strip() or "? ?"


def summarise(xml: Path) -> tuple[Counter, Counter]:
    """(outcome counts, skip reason -> count) of a JUnit XML file."""
    outcomes, skips = Counter(), Counter()
    for case in ElementTree.parse(xml).getroot().iter("testcase"):
        skipped = case.find("skipped")
        if skipped is not None:
            outcomes["skipped"] += 1
            skips[(skipped.get("message") or "").removeprefix("Skipped: ").strip()] += 1
        elif case.find("failure") is not None or case.find("error") is not None:
            outcomes["failed"] += 1
        else:
            outcomes["passed"] += 1
    return outcomes, skips


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("envs", nargs="*", default=list(MATRIX), metavar="[PYTHON:]JAX")
    parser.add_argument("--envs-dir", default=str(ROOT / ".ci" / "envs" / "matrix"))
    parser.add_argument("--pytest-args", default="", help="extra pytest arguments (e.g. a test path)")
    args = parser.parse_args(argv)
    wheels = Path(os.environ.get("CODEMOD_CI_WHEELS", ROOT / ".ci" / "wheels"))
    wheels.mkdir(parents=True, exist_ok=True)
    rows, skip_rows, failed = [], [], False
    for spec in args.envs:
        python_version, _, jax = spec.rpartition(":")
        python = find_python(python_version or "3.11")
        env = Path(args.envs_dir) / f"py{python_version or '3.11'}-jax{jax}"
        print(f"::: {spec}: install", file=sys.stderr, flush=True)
        started = time.monotonic()
        ok, why = install(python, env, jax, wheels)
        installed_s = time.monotonic() - started
        if not ok:
            failed = True
            rows.append(f"| {python_version or '3.11'} | {jax} | install failed: {why} | | | | |")
            continue
        py, version = installed_jax(env).split()
        xml = env / "junit.xml"
        print(f"::: {spec}: tests (Python {py}, jax {version})", file=sys.stderr, flush=True)
        started = time.monotonic()
        subprocess.run([str(env / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:randomly",
                        f"--junitxml={xml}", *args.pytest_args.split()], cwd=ROOT, check=False,
                       stdout=sys.stderr)
        tests_s = time.monotonic() - started
        outcomes, skips = summarise(xml)
        failed |= bool(outcomes["failed"])
        rows.append(f"| {py} | {version}{' (newest)' if jax == 'newest' else ''} | {outcomes['passed']} | "
                    f"{outcomes['failed']} | {outcomes['skipped']} | {installed_s:.0f} s | {tests_s:.0f} s |")
        for reason, count in sorted(skips.items()):
            skip_rows.append(f"| {py} | {version} | {count} | {reason} |")
    print("| Python | jax | passed | failed | skipped | install | tests |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    print("\n".join(rows))
    print()
    print("| Python | jax | skipped | why |")
    print("| --- | --- | --- | --- |")
    print("\n".join(skip_rows))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
