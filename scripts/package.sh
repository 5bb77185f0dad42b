#!/usr/bin/env bash
# Builds the Debian package: a Release build in build-package/ with the portable SIMD baseline
# (-DAE_SIMD=x86-64-v3, not the building machine's -march=native), installed into a staging
# directory where the .desktop file and the AppStream metadata are validated, then `cpack -G DEB`.
# Prints the path of the .deb. The version is project(VERSION) in CMakeLists.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --deps-only

# What only packaging needs: dpkg-shlibdeps (dpkg-dev) and `file`, which CPack uses to find the
# binaries to scan; the two validators.
packages=(dpkg-dev file desktop-file-utils appstream)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    echo "package: installing ${missing[*]}"
    sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    "${sudo[@]}" apt-get update -q
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

build_dir=build-package
if [ ! -f "$build_dir/CMakeCache.txt" ]; then
    cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DAE_SIMD=x86-64-v3 \
        -DBUILD_TESTING=OFF -DCMAKE_INSTALL_PREFIX=/usr
fi
grep -q '^AE_SIMD:STRING=x86-64-v3$' "$build_dir/CMakeCache.txt" ||
    { echo "package: $build_dir is not configured with AE_SIMD=x86-64-v3" >&2; exit 1; }
cmake --build "$build_dir" --parallel "${JOBS:-2}"

stage=$build_dir/stage
rm -rf "$stage"
DESTDIR=$PWD/$stage cmake --install "$build_dir"
echo "package: validating the desktop entry and the AppStream metadata"
desktop-file-validate "$stage"/usr/share/applications/*.desktop
appstreamcli validate --no-net --explain "$stage"/usr/share/metainfo/*.metainfo.xml

(cd "$build_dir" && cpack -G DEB)
deb=$(ls -t "$build_dir"/*.deb | head -1)
dpkg-deb --info "$deb"
echo "package: $deb"
