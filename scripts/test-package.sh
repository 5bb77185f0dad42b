#!/usr/bin/env bash
# Installs the .deb from scripts/package.sh with apt into a clean Debian 12 (bookworm) root made by
# debootstrap, and runs the installed program there: `--version`, one `export` of a preset and one
# `render` of it to PNG (offscreen, so it needs no display but does need the fonts it depends on).
# Proves that the package's dependencies are complete on a system that never saw the build.
# Needs root: debootstrap and chroot.
#
#   bash scripts/test-package.sh [PACKAGE.deb]      default: the newest build-package/*.deb
#
# The pristine root is made once and kept in build-package/bookworm-root (a few hundred MB);
# every run installs into a fresh copy of it. Delete that directory to start from scratch.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "test-package: needs root (debootstrap, chroot)" >&2; exit 1; }

deb=${1:-$(ls -t build-package/*.deb 2>/dev/null | head -1)}
[ -f "$deb" ] || { echo "test-package: no .deb; run scripts/package.sh first" >&2; exit 1; }

if ! command -v debootstrap >/dev/null; then
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap
fi

# The Debian mirror this machine already uses, read from apt's sources (one-line and deb822
# formats): the first `deb` entry for the bookworm suite itself. No mirror is written here.
mirror=$(
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$f" ] && sed -n 's/^[[:space:]]*deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([^[:space:]]\+\)[[:space:]]\+bookworm[[:space:]].*/\2/p' "$f"
    done
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] && awk 'BEGIN { RS = ""; FS = "\n" }
            { types = uris = suites = "";
              for (k = 1; k <= NF; k++) {
                  if ($k ~ /^Types:/) types = $k; if ($k ~ /^URIs:/) uris = $k;
                  if ($k ~ /^Suites:/) suites = $k }
              if (types ~ /[ \t]deb([ \t]|$)/ && suites ~ /[ \t]bookworm([ \t]|$)/) {
                  sub(/^URIs:[ \t]*/, "", uris); split(uris, u, /[ \t]+/); print u[1] } }' "$f"
    done | head -1
)
[ -n "$mirror" ] || { echo "test-package: no bookworm mirror in /etc/apt/sources.list*" >&2; exit 1; }
echo "test-package: mirror from apt's sources: $mirror"

pristine=build-package/bookworm-root
if [ ! -f "$pristine/.complete" ]; then
    rm -rf "$pristine"
    echo "test-package: debootstrap bookworm (minbase) into $pristine"
    debootstrap --variant=minbase bookworm "$pristine" "$mirror"
    touch "$pristine/.complete"
fi

root=build-package/test-root
mounted=()
cleanup() {
    for ((k = ${#mounted[@]} - 1; k >= 0; k--)); do umount "${mounted[k]}" || true; done
}
trap cleanup EXIT
rm -rf "$root"
cp -a "$pristine" "$root"
cp /etc/resolv.conf "$root/etc/resolv.conf"
for fs in proc dev; do
    if [ "$fs" = proc ]; then mount -t proc proc "$root/proc"; else mount --bind /dev "$root/dev"; fi
    mounted+=("$root/$fs")
done
cp "$deb" "$root/tmp/"
in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 "$@"; }

in_root apt-get update -q
# --no-install-recommends: the declared dependencies alone must be enough.
in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    "/tmp/$(basename "$deb")"
echo "test-package: installed $(in_root dpkg-query -W -f='${Package} ${Version}' attention-explorer)"

echo "test-package: attention-explorer --version"
in_root attention-explorer --version
echo "test-package: attention-explorer export --preset journey -o /tmp/r.json"
in_root attention-explorer export --preset journey -o /tmp/r.json
in_root test -s /tmp/r.json
echo "test-package: /tmp/r.json has $(wc -c <"$root/tmp/r.json") bytes:" \
    "$(head -c 120 "$root/tmp/r.json" | tr -s ' \n' ' ')..."
echo "test-package: attention-explorer render --preset journey -o /tmp/w.png"
in_root attention-explorer render --preset journey -o /tmp/w.png
# A PNG starts with its 8-byte signature; its IHDR chunk holds the width and height.
signature=$(head -c 8 "$root/tmp/w.png" | od -An -tx1 | tr -d ' ')
[ "$signature" = 89504e470d0a1a0a ] || { echo "test-package: /tmp/w.png is not a PNG" >&2; exit 1; }
size=$(od -An -tu1 -j16 -N8 "$root/tmp/w.png" | awk '{print $1*16777216+$2*65536+$3*256+$4 "x" $5*16777216+$6*65536+$7*256+$8}')
echo "test-package: /tmp/w.png is a ${size} PNG of $(wc -c <"$root/tmp/w.png") bytes"
cp "$root/tmp/w.png" build-package/test-package-render.png
echo "test-package: OK"
