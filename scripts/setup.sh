#!/usr/bin/env bash
# Create .venv with hopforge, its test extras and the Ray runner's extra. Idempotent:
# reinstalls only when pyproject.toml changed. torch is pinned to the CPU build (an unpinned torch pulls CUDA).
set -euo pipefail
cd "$(dirname "$0")/.."
# The viewer's browser tests drive Debian's chromium headless through chromium-driver.
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -q >/dev/null && \
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver >/dev/null
  else
    echo "note: the browser tests need chromium and chromium-driver (apt-get install" \
         "chromium chromium-driver, as root)" >&2
  fi
fi
PY=${PYTHON:-python3}
stamp=.venv/.hopforge-setup
want=$(sha256sum pyproject.toml | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then exit 0; fi
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q "torch==2.13.0"
.venv/bin/python -m pip install -q -e '.[test,ray]'
echo "$want" > "$stamp"
