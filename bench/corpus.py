"""Lay out issue 18's corpus: the *.py files of five JAX-heavy repositories at pinned commits.

    python bench/corpus.py /tmp/corpus5                          # git clone each (needs the network)
    python bench/corpus.py /tmp/corpus5 --mirrors /work/.mirror  # from local clones: MIRRORS/owner+name/repo
    python bench/run.py --tree /tmp/corpus5 --per-rule           # then time it

The installed-package tree ``bench/run.py`` lays out by default (jax, flax, optax, ... as pip
installs them) has no tests, notebooks or examples; these repositories do, and their test files
(``class FooTest(jtu.JaxTestCase):`` holding hundreds of methods, one module-level block of
several hundred KB) are what a migration or a CI bot actually meets. At the commits below:
2,308 files, 45 MB. Only ``*.py`` files are written (``git archive`` of the paths
``git ls-tree`` lists), one folder per repository, ``owner+name``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

# owner/name -> commit (HEADs of 2026-06/08, as fetched for the measurement in bench/PROFILE.md)
REPOSITORIES = {
    "jax-ml/jax": "cec06d116c05f0d52adfceee3d3b730fdbcb0ce5",
    "google/flax": "18f8f311c275d57f46d95e41b15aa97b454754c0",
    "NVIDIA/warp": "9934a4eb2c503399140daab09d256ccc7236d1d8",
    "google/brax": "0b96d056328d15ea7ebfd3ce07f42be72ec76e40",
    "google-deepmind/mujoco_playground": "d5e6b47531328468da1eec33b8b304a00bb0873c",
}


def git(git_dir: Path, *args: str, capture: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["git", f"--git-dir={git_dir}", *args], capture_output=capture, check=True)


def clone(repository: str, commit: str, scratch: Path) -> Path:
    """A bare, blob-less clone that has ``commit`` (blobs come on demand: only the *.py ones)."""
    target = scratch / repository.replace("/", "+")
    subprocess.run(["git", "clone", "--quiet", "--bare", "--filter=blob:none",
                    f"https://github.com/{repository}", str(target)], check=True)
    git(target, "cat-file", "-e", commit)
    return target


def lay_out(git_dir: Path, commit: str, destination: Path) -> int:
    """Write ``commit``'s *.py files under ``destination``; how many."""
    names = [n for n in git(git_dir, "ls-tree", "-r", "--name-only", commit).stdout.decode().splitlines()
             if n.endswith(".py")]
    if not names:
        return 0
    with tempfile.TemporaryFile() as archive:
        # A mirror without its largest blobs makes git complain about them even though no
        # path asked for is one: its stderr is shown only if the archive fails.
        done = subprocess.run(["git", f"--git-dir={git_dir}", "archive", "--format=tar", commit, "--", *names],
                              stdout=archive, stderr=subprocess.PIPE, check=False)
        if done.returncode:
            raise SystemExit(f"git archive {commit[:12]} in {git_dir}: {done.stderr.decode(errors='replace')}")
        archive.seek(0)
        with tarfile.open(fileobj=archive) as tar:
            tar.extractall(destination, filter="data")
    return len(names)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("destination", type=Path, help="an empty or new folder")
    parser.add_argument("--mirrors", type=Path,
                        help="local clones as MIRRORS/owner+name/repo (a git directory) instead of cloning")
    args = parser.parse_args(argv)
    if args.destination.exists() and any(args.destination.iterdir()):
        parser.error(f"{args.destination} is not empty")
    with tempfile.TemporaryDirectory(prefix="codemod-corpus-") as scratch:
        for repository, commit in REPOSITORIES.items():
            name = repository.replace("/", "+")
            git_dir = args.mirrors / name / "repo" if args.mirrors else clone(repository, commit, Path(scratch))
            try:
                git(git_dir, "cat-file", "-e", f"{commit}^{{commit}}")
            except subprocess.CalledProcessError:
                raise SystemExit(f"{git_dir} does not have {repository}@{commit[:12]}") from None
            count = lay_out(git_dir, commit, args.destination / name)
            print(f"{repository}@{commit[:12]}: {count} files", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
