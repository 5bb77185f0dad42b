#!/usr/bin/env bash
# Takes the window's screenshots in docs/: the default scene at 1024x768 (a projector) and
# 1920x1080, in normal and in presentation mode, each in a real window under Xvfb with fresh
# settings; presentation mode after switching views, and a model opened with the walkthrough
# open, under a window manager (openbox) that maximises the window as a desktop does; then the
# README tour's screenshots (tests/test_classroom's tour()).
# Look at every PNG before committing it. Not part of the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(xvfb xauth xdotool imagemagick openbox wmctrl)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    "${sudo[@]}" apt-get update -q
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
bash scripts/setup.sh
app=$PWD/${BUILD_DIR:-build}/app/attention-explorer
out=${1:-docs}

# shot SIZE OUT.png [KEY...]: the app on its default scene, the window filling the screen (bare
# Xvfb has no window manager, so F11 cannot make it full screen: xdotool sizes it instead).
# With WM=openbox the window manager runs and maximises the window, as on a desktop: what the
# window then asks for shows (a window wider than the screen would spill off it). A KEY may be
# "sleep:N" (wait N seconds, for a model to open).
shot() {
    local size=$1 png=$2
    shift 2
    local config
    config=$(mktemp -d)
    # As after a first start: the examples gallery, which opens once, already seen.
    mkdir -p "$config/attention-explorer"
    printf '[classroom]\ngalleryShown=true\n' >"$config/attention-explorer/attention-explorer.conf"
    XDG_CONFIG_HOME=$config XDG_DATA_HOME=$config LC_ALL=C.UTF-8 WM=${WM:-} APP_ARGS=${APP_ARGS:-} \
        xvfb-run -a -s "-screen 0 ${size}x24" bash -c '
        app=$1 png=$2 width=$3 height=$4
        shift 4
        if [ -n "$WM" ]; then "$WM" >/dev/null 2>&1 & sleep 2; fi
        "$app" $APP_ARGS >/dev/null 2>&1 &
        pid=$!
        sleep 5
        window=$(xdotool search --name "Attention Explorer" | head -1)
        if [ -n "$WM" ]; then
            wmctrl -i -r "$window" -b add,maximized_vert,maximized_horz
            sleep 1
            xdotool windowactivate --sync "$window" 2>/dev/null || true
        else
            xdotool windowsize "$window" "$width" "$height" windowmove "$window" 0 0
            sleep 1
            # Keys reach Qt only as real input to the window under the pointer (no window
            # manager gives focus): the pointer rests on the empty end of the menu bar.
            xdotool mousemove $((width - 60)) 10 click 1
        fi
        sleep 1
        for key in "$@"; do
            case $key in
                sleep:*) sleep "${key#sleep:}" ;;
                *) xdotool key "$key"; sleep 1 ;;
            esac
        done
        [ -n "$WM" ] || xdotool windowsize "$window" "$width" "$height" windowmove "$window" 0 0
        sleep 2
        if [ -n "$WM" ]; then
            geometry=$(xdotool getwindowgeometry "$window" | sed -n "s/.*Geometry: //p")
            echo "$png: window $geometry on a ${width}x${height} screen"
        fi
        import -window root "$png"
        kill "$pid"' _ "$app" "$png" "${size%x*}" "${size#*x}" "$@"
    rm -rf "$config"
    echo "wrote $png"
}

shot 1024x768 "$out/window-1024x768.png"
shot 1920x1080 "$out/window-1920x1080.png"
shot 1024x768 "$out/presentation-1024x768.png" F11
shot 1920x1080 "$out/presentation-1920x1080.png" F11
# Presentation mode after each view switch (View › One head, all stages: Alt+V S; One stage, all
# heads: Alt+V A), under openbox's real full screen: the same layout as entering on that view.
WM=openbox shot 1024x768 "$out/presentation-stages-1024x768.png" F11 alt+v s Return
WM=openbox shot 1024x768 "$out/presentation-switched-back-1024x768.png" F11 alt+v s Return alt+v Home Return
WM=openbox shot 1920x1080 "$out/presentation-stages-1920x1080.png" F11 alt+v s Return
# The walkthrough (F3) at 1024 pixels, as it is and presented, then a built-in model opened with
# the walkthrough open (File › Open built-in model, the first: Alt+F B Return).
WM=openbox shot 1024x768 "$out/walkthrough-1024x768.png" F3
WM=openbox shot 1024x768 "$out/walkthrough-presentation-1024x768.png" F3 F11
WM=openbox shot 1024x768 "$out/model-with-walkthrough-1024x768.png" F3 alt+f b Return sleep:8
# The built-in translator's Translation tab (three grids, the alignment), as it is and presented.
APP_ARGS=builtin:tiny-translate WM=openbox shot 1024x768 "$out/translation-1024x768.png"
APP_ARGS=builtin:tiny-translate WM=openbox shot 1024x768 "$out/translation-presentation-1024x768.png" F11

AE_TOUR_DIR=$PWD/$out QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 1600x1000x24" \
    "${BUILD_DIR:-build}/tests/test_classroom" tour >/dev/null
echo "wrote the tour's screenshots to $out/"
# A layer of each newer decoder family at 1024x768 (to look at, in a folder of their own), and
# Gemma 2's capped stage beside its scaled scores for docs/.
families=${FAMILIES_DIR:-$(mktemp -d)}
AE_TOUR_DIR=$families QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 1600x1000x24" \
    "${BUILD_DIR:-build}/tests/test_model_window_families" tour >/dev/null
mv "$families/gemma2-capped-1024x768.png" "$out/"
echo "wrote the families' screenshots to $families/ and $out/gemma2-capped-1024x768.png"
