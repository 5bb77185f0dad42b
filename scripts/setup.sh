#!/usr/bin/env bash
# Installs what the build needs (only what is missing) and builds Release into build/.
# Idempotent: on a machine that has everything it only runs an incremental build.
# Root runs apt directly; anyone else goes through sudo. With --deps-only it installs and stops
# (the fuzz, sanitize and package scripts build into directories of their own).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake g++ ninja-build qt6-base-dev qt6-svg-dev libqcustomplot-dev libeigen3-dev
          libgl-dev libgif-dev libopenblas-openmp-dev libsentencepiece-dev fonts-dejavu-core xvfb
          xauth poppler-utils)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]}"
    sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    "${sudo[@]}" apt-get update -q
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

[ "${1:-}" = "--deps-only" ] && exit 0

build_dir=${BUILD_DIR:-build}
if [ ! -f "$build_dir/CMakeCache.txt" ]; then
    cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release
fi
cmake --build "$build_dir" --parallel "$(nproc)"
