#!/usr/bin/env bash
# Writes every number and render a refactor must not change into OUT_DIR:
# the export of each golden scene (json), `run --double` of every test model
# (with and without a padding mask where the family takes one, and with
# ablations), `heads --json --double`, and renders of scenes and models.
# Compare two snapshots with scripts/compare_snapshots.py.
# Usage: scripts/behaviour_snapshot.sh BINARY OUT_DIR
set -euo pipefail
binary=$(readlink -f "$1")
out=$2
root="$(cd "$(dirname "$0")/.." && pwd)"
data="$root/tests/data"
mkdir -p "$out"
export QT_QPA_PLATFORM=offscreen

for scene in "$data"/*.scene.json "$data"/scene-v2/*.scene.json; do
    name=$(basename "$scene" .scene.json)
    "$binary" export "$scene" -o "$out/export-$name.json"
    "$binary" render "$scene" --head all --stage weights -o "$out/render-$name.png"
done

ids=7,41,3,59,22,15,36
for dir in "$data"/models/*/ builtin:tiny-induction; do
    name=$(basename "$dir")
    [ "$dir" = builtin:tiny-induction ] && { name=tiny-induction; ids_here=1,2,3,4,1,2,3; } \
        || ids_here=$ids
    "$binary" run "$dir" --ids "$ids_here" --double -o "$out/run-$name.json"
    "$binary" run "$dir" --ids "$ids_here" -o "$out/run-float-$name.json"
    "$binary" run "$dir" --ids "$ids_here" --double --ablate 0.0,1.1 \
        -o "$out/run-ablate-$name.json"
    "$binary" run "$dir" --ids "$ids_here" --double --ablate 1.0 --ablate-mode mean \
        -o "$out/run-mean-$name.json"
    "$binary" heads "$dir" --ids "$ids_here" --json --double > "$out/heads-$name.json"
    "$binary" render "$dir" --ids "$ids_here" --view model -o "$out/render-model-$name.png"
    "$binary" render "$dir" --ids "$ids_here" --view head --layer 1 --head 0 \
        -o "$out/render-head-$name.png"
    "$binary" scene "$dir" --ids "$ids_here" --layer 1 -o "$out/scene-$name.json"
done
for dir in "$data"/models/bert-tiny/ "$data"/models/bert-tiny-legacy/; do
    name=$(basename "$dir")
    "$binary" run "$dir" --ids 7,41,3,59,22,0,0 --attention-mask 1,1,1,1,1,0,0 --double \
        -o "$out/run-padded-$name.json"
done
echo "snapshot: $(ls "$out" | wc -l) files in $out"
