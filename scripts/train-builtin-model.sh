#!/bin/sh
# Trains the built-in model resources/models/tiny-induction with the project's own trainer
# (`attention-explorer train --model`, core/training/model_training.h) from a fixed seed, and writes its
# files there: config.json, model.safetensors and the byte-level tokenizer (vocab.json,
# merges.txt). about.json is written by hand from what this prints and is left as it is.
#
# The training is deterministic (double precision, one thread, SplitMix64 from the seed): two runs
# give byte-identical files (docs/training.md, "The built-in model", has the command, the time and
# the measured scores). Then it prints `heads` on the new files, the numbers about.json's note and
# tests/cli/test_shipped_model check.
#
#   scripts/train-builtin-model.sh [BUILD_DIR] [OUTPUT_FOLDER]
#     BUILD_DIR       default build
#     OUTPUT_FOLDER   default resources/models/tiny-induction (give another to compare two runs)
set -eu

cd "$(dirname "$0")/.."
build=${1:-build}
output=${2:-resources/models/tiny-induction}
binary=$build/app/attention-explorer
[ -x "$binary" ] || { echo "no $binary: build first (cmake --build $build)" >&2; exit 1; }

# The recipe. Changing any of these changes the model: retrain, then rewrite about.json's note.
# Every 4th step trains on previous-token sequences: with induction alone the previous-token role
# ends up split between layer-0 heads (each about 0.45), none of which reads as one on its own.
set -- --model 2 --heads 4 --d-model 64 --family llama --vocab 128 --length 64 \
       --task induction --previous-token-every 4 --steps 2000 --lr 0.001 --batch 16 --seed 1

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
start=$(date +%s)
"$binary" train "$@" -o "$work/model"
end=$(date +%s)
echo "trained in $((end - start)) s"

mkdir -p "$output"
for file in config.json model.safetensors vocab.json merges.txt; do
    cp "$work/model/$file" "$output/$file"
done
echo "wrote $output"
sha256sum "$output/config.json" "$output/model.safetensors" "$output/vocab.json" \
    "$output/merges.txt"
"$binary" heads "$output" --induction-random 20
