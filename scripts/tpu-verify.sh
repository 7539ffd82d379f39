#!/usr/bin/env bash
# Runs every execution case on a TPU and writes the record (scripts/tpu_record.py) to OUT.
#
# On the TPU machine (JAX with libtpu, no network, an ordinary user): torch comes from the
# machine's own wheels, this project and what it needs from wheels carried in .whl-tpu
# (scripts/tpu-wheels.sh makes them), all installed under a folder added at the end of
# PYTHONPATH, so the machine's JAX stays first. Every case runs in one process (one program
# holds the chip at a time). Usage: COMMIT=<sha> scripts/tpu-verify.sh [OUT]  (about 3 minutes)
# Then copy OUT/record.json to .ci/results/tpu/<date>-<commit>.json and run
# `python scripts/tpu_record.py update` (the README's TPU table).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-${OUT:-/tmp/codemod-tpu-verify}}
site=${CODEMOD_TPU_SITE:-/tmp/codemod-site}
python=${PYTHON:-python3}
mkdir -p "$out" "$site"
install() { PIP_CONFIG_FILE=/dev/null "$python" -m pip install --isolated -q --no-compile --no-cache-dir --target "$site" "$@"; }
if ls .whl-tpu/*.whl >/dev/null 2>&1; then
    install --no-index --no-deps --upgrade .whl-tpu/*.whl || exit 2
fi
export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}$site
"$python" -c "import torch" 2>/dev/null ||
    install --only-binary=:all: --index-url file:///opt/pypi/simple --find-links /opt/wheels torch==2.13.0 || exit 2
if ! "$python" -c 'import sys, jax; sys.exit(jax.default_backend() != "tpu")'; then
    echo "tpu-verify: needs a TPU that JAX sees" >&2
    exit 2
fi
"$python" tests/platform_probe.py > "$out/probe.json" || exit 2
CODEMOD_EXEC_PLATFORMS= timeout 500 "$python" -m pytest tests/test_execution.py -q -rs -p no:cacheprovider \
    --junitxml="$out/junit.xml" 2>&1 | tee "$out/pytest.log"
status=${PIPESTATUS[0]}
"$python" scripts/tpu_record.py write "$out/junit.xml" "$out/probe.json" "${COMMIT:-unknown}" > "$out/record.json"
"$python" - "$out/record.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"tpu-verify: {r['device_kind']} jax {r['jax']}: {r['passed']} passed, {r['failed']} failed, {r['skipped']} skipped")
PY
exit "$status"
