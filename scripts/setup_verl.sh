#!/usr/bin/env bash
# Create .venv-verl: verl beside the CPU torch, for the tests that run verl's own tool and
# reward machinery on exported rows. verl pins transformers below what hopforge's TRL needs,
# so it gets an environment of its own; hopforge goes in without its dependencies (the verl
# side only imports its stdlib-only reward module and its verl tool classes).
# Idempotent: reinstalls only when this script or pyproject.toml changed.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
VERL_VERSION=${VERL_VERSION:-0.9.1}
stamp=.venv-verl/.hopforge-setup
want=$(cat "$0" pyproject.toml | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then exit 0; fi
[ -x .venv-verl/bin/python ] || "$PY" -m venv .venv-verl
.venv-verl/bin/python -m pip install -q --upgrade pip
.venv-verl/bin/python -m pip install -q "torch==2.13.0" "verl==${VERL_VERSION}" cachetools uvicorn fastapi
.venv-verl/bin/python -m pip install -q --no-deps -e .
echo "$want" > "$stamp"
