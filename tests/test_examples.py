"""The shipped examples: the README's first command must show real diffs, and the fixed
examples must run with real JAX (the originals, written for old JAX, must not)."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import jax_codemod
from jax_codemod.analysis import jax_versions
from jax_codemod.engine.pipeline import Settings, process_source
from test_cli import invoke
from test_execution import HARNESS, execution_env

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
# tpu_project/ declares jax[tpu]: its target platforms include the TPU, which JAX004 and JAX008 are for.
DEFAULT_ON = ["export_to_opencl.py", "export_to_torch.py", "interop.py", "log_buffer_pointers.py",
              "sharded_to_torch.py"]
# jax.dlpack.to_dlpack, which this example calls, still works before 0.7 (the fix must run there too).
BREAKS_FROM_0_7 = ["export_to_torch.py"]
INSTALLED_JAX = jax_versions.installed() or jax_versions.NEWEST_KNOWN  # read before conftest pins it


def fixed(path: Path) -> bytes:
    settings = Settings(tuple(rule() for rule in jax_codemod.RULES), unsafe_fixes=True)
    result = process_source(path.read_bytes(), path.name, settings)
    assert result.error is None, result.error
    return result.fixed if result.changed else result.source


def test_dry_run_on_examples_shows_a_diff_for_each_default_rule():
    before = {path: path.read_bytes() for path in EXAMPLES.rglob("*.py")}
    code, out, err = invoke(["run", "--dry-run", "--no-cache", EXAMPLES])
    assert code == 1
    changed = sorted(line.split("/")[-1] for line in out.splitlines() if line.startswith("+++ "))
    assert changed == DEFAULT_ON
    summary = err.strip().splitlines()[-1]
    for rule in jax_codemod.RULES:
        assert (rule.CODE in summary) == rule.DEFAULT_ENABLED, summary
    assert {path: path.read_bytes() for path in EXAMPLES.rglob("*.py")} == before


def test_every_example_runs_after_the_fix():
    examples = sorted(EXAMPLES.glob("*.py"))
    spec = []
    for path in examples:
        spec.append({"id": f"{path.name}:before", "source": path.read_text()})
        spec.append({"id": f"{path.name}:after", "source": fixed(path).decode()})
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(spec, handle)
    done = subprocess.run([sys.executable, str(HARNESS), handle.name], capture_output=True, text=True,
                          env=execution_env(False), timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    outcomes = dict(zip((entry["id"] for entry in spec), json.loads(done.stdout.splitlines()[-1])))
    for path in examples:
        after = outcomes[f"{path.name}:after"]
        assert after["ok"], f"{path.name} after the fix:\n{after.get('traceback')}"
        if path.name in DEFAULT_ON and not (path.name in BREAKS_FROM_0_7 and INSTALLED_JAX < (0, 7, 0)):
            assert not outcomes[f"{path.name}:before"]["ok"], f"{path.name} ran before the fix"
