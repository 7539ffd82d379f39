"""Issue 52 end to end: each failing row of the TPU's table (../shared/notes/tpu.md, measured again
in .ci/results/tpu/) written as real code, in a project that declares `jax[tpu]`, gets a finding and
a fix; the same code in a project that declares `jax[cuda12]`, or nothing, gets none of them. The
fixed code's values on a TPU are the execution suite's (tests/snapshots/dlpack_without_host_fallback/
rewrite_unknown_origin.py, dlpack_import_on_host/, every case fixed for a TPU target); here the
fixed file is also run under the simulated TPU."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import platform_sim
import pytest
from test_cli import invoke

# One function per failing row of the TPU table, each called by the script at the end.
CODE = '''\
import jax
import jax.dlpack
import jax.numpy as jnp
import numpy as np
import torch
import torch.utils.dlpack


def rows(x: jax.Array, t: torch.Tensor):
    out = {}
    out["torch.from_dlpack"] = torch.from_dlpack(x).sum().item()
    out["torch.utils.dlpack.from_dlpack"] = torch.utils.dlpack.from_dlpack(x).sum().item()
    out["np.from_dlpack"] = float(np.from_dlpack(x).sum())
    out["np.from_dlpack copy"] = float(np.from_dlpack(x, copy=True).sum())
    out["capsule"] = torch.utils.dlpack.from_dlpack(x.__dlpack__()).sum().item()
    out["memoryview"] = memoryview(x).nbytes
    out["np.frombuffer"] = float(np.frombuffer(x, dtype=np.float32).sum())
    out["torch.as_tensor"] = torch.as_tensor(x).sum().item()
    weights = jax.device_put(jnp.ones(3), jax.devices()[0])
    out["jit with an import"] = float(jax.jit(lambda w, b: w * b)(weights, jax.dlpack.from_dlpack(t)).sum())
    return out


if __name__ == "__main__":
    import json

    print(json.dumps(rows(jnp.arange(6.0, dtype=jnp.float32), torch.arange(3.0))))
'''
EXPECTED = {
    "torch.from_dlpack": 15.0, "torch.utils.dlpack.from_dlpack": 15.0, "np.from_dlpack": 15.0,
    "np.from_dlpack copy": 15.0, "capsule": 15.0, "memoryview": 24, "np.frombuffer": 15.0,
    "torch.as_tensor": 15.0, "jit with an import": 3.0,
}
FINDINGS_ON_A_TPU = {**dict.fromkeys(range(11, 19), "JAX004"), 20: "JAX008"}  # the lines of `rows`


def project(tmp_path: Path, requirement: str | None) -> Path:
    if requirement:
        (tmp_path / "requirements.txt").write_text(f"{requirement}\ntorch\n")
    (tmp_path / ".git").mkdir()  # the project's top: the requirement walk stops here
    (tmp_path / "interop.py").write_text(CODE)
    return tmp_path


def findings(root: Path) -> dict[int, str]:
    code, out, err = invoke(["run", "--check", "--no-cache", "--format", "json", "interop.py"], cwd=root)
    assert code in (0, 1), err
    return {f["line"]: f["code"] for f in json.loads(out)["findings"] if f["code"] in ("JAX004", "JAX008")}


def test_a_tpu_project_gets_a_finding_for_each_row_the_tpu_refuses(tmp_path):
    assert findings(project(tmp_path, "jax[tpu]>=0.4.30")) == FINDINGS_ON_A_TPU


@pytest.mark.parametrize("requirement", ["jax[cuda12]>=0.4.30", "jax>=0.4.30", None])
def test_a_cpu_or_gpu_project_gets_none_of_them(tmp_path, requirement):
    assert findings(project(tmp_path, requirement)) == {}


def test_the_fixed_tpu_project_gives_the_same_values_on_the_simulated_tpu(tmp_path):
    root = project(tmp_path, "jax[tpu]")
    code, _, err = invoke(["run", "--no-cache", "interop.py"], cwd=root)
    assert code == 0, err
    fixed = (root / "interop.py").read_text()
    assert "ensure_exportable(x)" in fixed and "on_default_device(jax.dlpack.from_dlpack(t))" in fixed
    tests = Path(__file__).resolve().parent
    runner = (f"import sys, runpy; sys.path.insert(0, {str(tests)!r}); import platform_sim;"
              f" platform_sim.activate('tpu'); runpy.run_path({str(root / 'interop.py')!r}, run_name='__main__')")
    env = {**os.environ, "JAX_PLATFORMS": "cpu",
           "XLA_FLAGS": f"--xla_force_host_platform_device_count={platform_sim.DEVICES_NEEDED}"}
    done = subprocess.run([sys.executable, "-c", runner], capture_output=True, text=True, env=env, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == EXPECTED
    (root / "original.py").write_text(CODE)
    broken = subprocess.run([sys.executable, "-c", runner.replace("interop.py", "original.py")],
                            capture_output=True, text=True, env=env, timeout=300, check=False)
    assert broken.returncode != 0 and "BufferError" in broken.stderr  # the original raises on the TPU
