#!/usr/bin/env bash
# Runs the execution suite on an NVIDIA GPU and prints a pass/fail table per rule.
#
# Expects a machine with one NVIDIA GPU and its own CUDA builds of jax and torch
# (nothing of either is downloaded): it installs only this project, without
# dependencies it already has, then runs every before/after case on the GPU backend.
# Usage: scripts/gpu-verify.sh [OUTPUT_DIR]   (finishes well under 5 minutes)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-${OUT:-/tmp/codemod-gpu-verify}}
mkdir -p "$out"
python=${PYTHON:-python3}

if ! "$python" -c "import jax, torch, sys; sys.exit(jax.default_backend() != 'gpu')" 2>/dev/null; then
    echo "gpu-verify: needs CUDA builds of jax and torch, and a GPU that JAX sees" >&2
    "$python" -c "import jax; print('jax', jax.__version__, jax.devices())" >&2 || true
    exit 2
fi

# The project only; pip must not touch the machine's jax or torch.
"$python" -m pip install -q --no-deps -e . || exit 2
for package in libcst click pathspec pytest syrupy; do
    "$python" -c "import $package" 2>/dev/null || "$python" -m pip install -q "$package" || exit 2
done

"$python" - <<'PY' | tee "$out/versions.txt"
import datetime, jax, jaxlib, torch
print(f"date {datetime.date.today()}  jax {jax.__version__}  jaxlib {jaxlib.__version__}  torch {torch.__version__}")
print(f"devices {jax.devices()}  torch.cuda {torch.cuda.is_available()} {torch.version.cuda}")
PY

# The whole execution suite on the GPU backend: cases that need several devices skip
# on a one-GPU machine, and the gpu-marked cases (zero-copy, device pointers) run.
CODEMOD_EXEC_PLATFORMS=cuda timeout 280 "$python" -m pytest tests/test_execution.py \
    -q -rs -p no:cacheprovider --junitxml="$out/junit.xml" 2>&1 | tee "$out/pytest.log"
status=${PIPESTATUS[0]}

"$python" scripts/verification_table.py "$out/junit.xml" | tee "$out/table.md"
exit "$status"
