#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite through ctest (offscreen: no display needed).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure --parallel "$(nproc)"
