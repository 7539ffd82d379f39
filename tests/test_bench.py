"""The benchmark's own bookkeeping: the prefilter-vs-findings table and the trees it lays out."""

from __future__ import annotations

import collections
import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _bench_script(name: str):
    """bench/<name>.py, imported as the module ``bench_<name>``."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", REPO / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


bench = _bench_script("run")

BROKEN = "import jax.dlpack\nimport torch\n\nt = torch.from_dlpack(jax.dlpack.to_dlpack(x))\n"
TRIGGER_ONLY = "# jax.dlpack.to_dlpack was removed; nothing here calls it\nimport jax\n"
CLEAN = "import os\n"


def test_prefilter_table_counts_passes_and_files_with_findings(tmp_path):
    root = tmp_path / "tree"
    root.mkdir()
    for name, text in (("broken.py", BROKEN), ("trigger_only.py", TRIGGER_ONLY), ("clean.py", CLEAN)):
        (root / name).write_text(text)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    table, parsed = bench.prefilter_table(bench.python_files([root]), [str(root)], env)
    row = next(r for r in table if r["code"] == "JAX005")
    assert (row["passed"], row["files_with_findings"], row["findings"]) == (2, 1, 1)
    assert parsed == 2
    assert all(r["files_with_findings"] <= r["passed"] for r in table)


def test_copies_and_tiny_files_are_laid_out_in_full(tmp_path):
    root = tmp_path / "pkg"
    (root / "sub").mkdir(parents=True)
    (root / "a.py").write_text("x = 1\n")
    (root / "sub" / "b.py").write_text("y = 2\n")
    copies = bench.replicate([root], tmp_path / "x3", 3)
    assert len(bench.python_files(copies)) == 6
    tiny = bench.tiny_tree(tmp_path / "tiny", 1200)
    files = bench.python_files([tiny])
    assert len(files) == 1200
    assert sum("jax.jit" in f.read_text() for f in files) == 240


def test_per_rule_profile_splits_a_run_into_its_parts(tmp_path):
    root = tmp_path / "tree"
    root.mkdir()
    for name, text in (("broken.py", BROKEN), ("trigger_only.py", TRIGGER_ONLY), ("clean.py", CLEAN)):
        (root / name).write_text(text)
    parts = {p["part"]: p for p in bench.per_rule_profile(bench.python_files([root]), 1, [str(root)])}
    assert {"discovery", "read", "prefilter", "decode", "whole-file ast.parse", "release", "gc", "total"} <= set(parts)
    assert parts["JAX005"]["files"] == 2 and parts["JAX005"]["findings"] == 1
    assert parts["JAX002"]["files"] == 2 and parts["JAX002"]["findings"] == 0
    assert parts["total"]["cpu"] >= max(p["cpu"] for name, p in parts.items() if name != "total")


corpus = _bench_script("corpus")


def test_corpus_lays_out_only_the_python_files_of_the_commit(tmp_path):
    import subprocess

    work = tmp_path / "repo"
    (work / "pkg").mkdir(parents=True)
    (work / "pkg" / "a.py").write_text("import jax\n")
    (work / "notes.md").write_text("not python\n")
    (work / "b.py").write_text("x = 1\n")
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t")

    def git(*args):
        return subprocess.run(["git", "-C", str(work), *args], check=True, capture_output=True, env=env,
                              text=True).stdout.strip()

    git("init", "-q")
    git("add", ".")
    git("commit", "-q", "-m", "first")
    first = git("rev-parse", "HEAD")
    (work / "b.py").write_text("x = 2\n")  # a later commit must not leak into the laid-out one
    git("commit", "-q", "-am", "second")
    out = tmp_path / "out"
    assert corpus.lay_out(work / ".git", first, out) == 2
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == ["b.py", "pkg/a.py"]
    assert (out / "b.py").read_text() == "x = 1\n"


def test_instructions_counts_the_checkout_and_a_baseline_with_the_same_command(tmp_path, monkeypatch):
    """bench/instructions.py: one command for every side, the baseline's package on PYTHONPATH,
    the count read from cachegrind's summary (valgrind itself is not run here)."""
    counting = _bench_script("instructions")
    run = counting.command("tree", ["JAX001"])
    assert run[-1] == "tree" and "--select=JAX001" in run and run[run.index("-j") + 1] == "1"
    # The CPU alarm is off (valgrind runs ~50x slower), where the revision's CLI has the option.
    assert "--analysis-budget-seconds=0" in run and counting._has_budget(counting.REPO / "cli")
    assert not any(a.startswith("--analysis-budget") for a in counting.command("tree", [], budget=False))
    seen = []

    class Done:
        returncode = 0
        stderr = "==1== I   refs:      1,234,567\n"

    def fake(args, env, **kwargs):
        seen.append((args, env.get("PYTHONPATH"), env["PYTHONHASHSEED"]))
        return Done()

    monkeypatch.setattr(counting.subprocess, "run", fake)
    assert counting.instructions(run, "/pkg", tmp_path) == 1234567
    assert seen[0][0][0] == "valgrind" and seen[0][0][-len(run):] == run
    assert seen[0][1:] == ("/pkg", "0")
    # A run that died part way has a count too, of less work: it is refused, not reported.
    Done.returncode = -9
    with pytest.raises(SystemExit, match="failed"):
        counting.instructions(run, "/pkg", tmp_path)
    Done.returncode, Done.stderr = 1, Done.stderr + "Traceback (most recent call last):\nMemoryError\n"
    with pytest.raises(SystemExit, match="failed"):
        counting.instructions(run, "/pkg", tmp_path)


def test_text_proof_tells_an_untraced_method_from_a_named_helper():
    """bench/text_proof.py's estimate: an access directly in a test method nothing names is
    decidable; the same access in a helper the method calls, or after a lambda, is not."""
    undecidable = _bench_script("text_proof").undecidable
    head = "import jax\nimport numpy as np\n\n\nclass T:\n"
    own_body = head + "    def test_a(self):\n        y = jax.jit(f)(x)\n        return np.asarray(y).item()\n"
    helper = head + "    def _read(self, y):\n        return y.item()\n\n    def test_a(self):\n        return self._read(jax.jit(f)(x))\n"
    after_lambda = head + "    def test_a(self):\n        g = jax.jit(lambda x: x)\n        return g(x).item()\n"
    in_docstring = head + '    def test_a(self):\n        """x.item() and np.asarray(x)"""\n'
    assert undecidable(own_body, False) is None
    assert undecidable(helper, False) == "the function is named elsewhere in the file"
    assert undecidable(after_lambda, False) == "a lambda before the access in its function"
    assert undecidable(in_docstring, False) is None
    assert undecidable(head + "    def test_a(self):\n        return bytes(x)\n", False) == "a consumer named bare"


def test_lines_counts_each_function_of_a_run_and_compares_two_runs(tmp_path):
    """bench/lines.py: a traced run counts the line events of the functions it ran (the rule
    that checked the broken file among them), keyed so that two runs line up."""
    lines = _bench_script("lines")
    root = tmp_path / "tree"
    root.mkdir()
    (root / "broken.py").write_text(BROKEN)
    # The search for a declared jax range walks up until a folder declares one, listing each
    # folder: without one it lists /tmp, where other processes come and go (a line per entry).
    # (Not a `.git` marker: discovery would run git, whose pipes' reads vary from run to run.)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\ndependencies = ['jax>=0.4.30']\n")
    rows = lines.count(str(root), str(REPO), ["-j", "1"])
    by_function = lines.totals(rows, "function")
    checks = [key for key in by_function if key[0] == "jax_codemod/rules/removed_dlpack_api.py"]
    assert checks and all(by_function[key] > 0 for key in checks)
    assert lines.totals(rows, "file")[("jax_codemod/rules/removed_dlpack_api.py",)] == sum(by_function[k] for k in checks)
    # The same run twice counts the same (PYTHONHASHSEED=0, nothing timed).
    assert lines.totals(lines.count(str(root), str(REPO), ["-j", "1"]), "function") == by_function
    here = collections.Counter({("a", "f"): 5, ("a", "g"): 1})
    there = collections.Counter({("a", "f"): 2, ("a", "h"): 4})
    # The most gained first; with a short list, the most lost after it.
    assert [row.split()[0] for row in lines.compare(here, there, 4)] == ["+3", "+1", "-4"]
    assert [row.split()[-1] for row in lines.compare(here, there, 1)] == ["a:f"]
    assert [row.split()[-1] for row in lines.compare(here, there, 2)] == ["a:f", "a:g"]
    assert [row.split()[-1] for row in lines.compare(here, there, 4)][-1] == "a:h"


def test_the_work_count_guard_fails_past_three_percent_and_refuses_other_trees():
    """bench/workcount.py's verdict on a measurement against a baseline: within ±3% passes,
    more lines fail (re-baseline with a reason), fewer fail too (so later creep cannot spend
    a saving), and a tree that is not the baseline's (another version installed) is refused
    rather than compared."""
    workcount = _bench_script("workcount")
    versions = {"python": "3.11.7", "jax": "0.10.2"}

    def measured(lines: int, digest: str = "d") -> dict:
        return {name: {"guarded": lines, "digest": digest} for name in workcount.TREES}

    baseline = {"versions": versions, "trees": measured(1000), "total": 1000 * len(workcount.TREES)}
    assert workcount.compare(baseline, measured(1030), versions)[0] == 0
    assert workcount.compare(baseline, measured(970), versions)[0] == 0
    status, lines = workcount.compare(baseline, measured(1031), versions)
    assert status == 1 and "--rebaseline --reason" in lines[-1]
    assert workcount.compare(baseline, measured(969), versions)[0] == 1
    # Per tree: one tree's cost is not hidden by another's saving with the total unmoved.
    mixed = measured(1000)
    mixed["jax"] = {**mixed["jax"], "guarded": 1040}
    mixed["numpy"] = {**mixed["numpy"], "guarded": 960}
    status, lines = workcount.compare(baseline, mixed, versions)
    assert status == 1 and "on: jax" in lines[-1]
    status, lines = workcount.compare(baseline, measured(1000, "other"), versions)
    assert status == 2 and "jax" in lines[0]
    # A tree that is not the baseline's (another numpy) is left out, said so; the rest compared.
    one_differs = measured(1000)
    one_differs["numpy"] = {"guarded": 5000, "digest": "other"}
    status, lines = workcount.compare(baseline, one_differs, versions)
    assert status == 0 and "not compared" in lines[0] and "numpy" in lines[0]
    one_differs["jax"] = {**one_differs["jax"], "guarded": 1100}
    assert workcount.compare(baseline, one_differs, versions)[0] == 1
    assert workcount.compare(baseline, measured(1000), {**versions, "python": "3.12.1"})[0] == 2
    assert workcount.compare(baseline, measured(1000), {**versions, "python": "3.11.9"})[0] == 0
    # Whose code a line ran in: codemod's and the standard library's are guarded.
    assert workcount.kind("jax_codemod/engine/pipeline.py") == "codemod"
    assert workcount.kind(os.__file__) == "stdlib"
    assert workcount.kind("<frozen posixpath>") == "stdlib"
    assert workcount.kind("<frozen importlib._bootstrap_external>") == "other"
    assert workcount.kind(pytest.__file__) == "other"


def test_the_committed_work_count_baseline_covers_every_tree_with_a_reason():
    workcount = _bench_script("workcount")
    baseline = json.loads((REPO / "bench" / "baseline.json").read_text())
    assert set(baseline["trees"]) == set(workcount.TREES)
    assert baseline["total"] == sum(tree["guarded"] for tree in baseline["trees"].values())
    assert baseline["reason"].strip() and set(workcount.PACKAGES) <= set(baseline["versions"])
