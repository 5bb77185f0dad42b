#!/usr/bin/env bash
# Renders resources/icons/attention-explorer.svg to the PNG sizes desktops look up
# (resources/icons/attention-explorer-N.png). The PNGs are committed, so building and packaging
# need no SVG renderer; run this after changing the SVG.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v rsvg-convert >/dev/null; then
    sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    "${sudo[@]}" apt-get update -q
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends librsvg2-bin
fi
# Keep in step with AE_ICON_SIZES in resources/CMakeLists.txt.
for size in 16 24 32 48 64 128 256; do
    rsvg-convert -w "$size" -h "$size" resources/icons/attention-explorer.svg \
        -o "resources/icons/attention-explorer-$size.png"
done
ls -l resources/icons/
