#!/usr/bin/env bash
# Makes .whl-tpu: the wheels scripts/tpu-verify.sh installs on the TPU machine, which has no
# network (this project, libcst, click, syrupy, pyyaml, packaging, typing_extensions; Python 3.11,
# manylinux x86-64). .whl-tpu must be git-ignored locally (`echo /.whl-tpu/ >> .git/info/exclude`)
# and named in the device call's `carry`.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
rm -rf .whl-tpu
"$python" -m pip download -q --no-deps --only-binary=:all: --python-version 3.11 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d .whl-tpu libcst==1.9.0 pyyaml click syrupy packaging typing_extensions
"$python" -m pip wheel -q --no-deps --no-build-isolation -w .whl-tpu .
ls .whl-tpu
