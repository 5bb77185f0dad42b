#!/usr/bin/env bash
# Sets up, builds and starts Attention Explorer on its default scene (or on the scene file given).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ] && [ -z "${QT_QPA_PLATFORM:-}" ]; then
    echo "start: no display found; starting inside a virtual X server (xvfb-run)." >&2
    exec xvfb-run -a -s "-screen 0 1600x1000x24" build/app/attention-explorer "$@"
fi
exec build/app/attention-explorer "$@"
