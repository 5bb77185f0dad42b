#!/usr/bin/env bash
# Whole-model speed against PyTorch: `attention-explorer bench --model` and scripts/model_peer.py
# (model_reference.py's forward in float32, PyTorch eager, 2 threads) on the same cached folder of
# random weights in a checkpoint's shape, in turn A B A B, ROUNDS rounds. Prints each round's
# ratio peer/ours per L, their medians, and the fraction of the same-run SGEMM rate reached at the
# largest L. Not part of CI: a round takes minutes.
#
#   scripts/bench-model.sh [BUILD_DIR]
#   env: SIZES (128,512,1024), ROUNDS (3), REPS (5, ours), PEER_REPS (3), THREADS (2),
#        REFERENCE (model_reference.py; default ../shared/reference next to the repository),
#        CACHE_DIR (default: bench --model's own; without SHAPES only),
#        SHAPES (e.g. qwen2.5-0.5b,pythia-410m: those shapes in turn, one section each, with our
#        GFLOP/s per L beside gpt2-small's; unset: gpt2-small alone, in the output scripts read)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
exe="$build/app/attention-explorer"
SIZES="${SIZES:-128,512,1024}" ROUNDS="${ROUNDS:-3}" REPS="${REPS:-5}"
PEER_REPS="${PEER_REPS:-3}" THREADS="${THREADS:-2}"
if [ -z "${REFERENCE:-}" ]; then
    for candidate in "$root/../shared" "$root/../../shared"; do
        [ -f "$candidate/reference/model_reference.py" ] &&
            REFERENCE="$candidate/reference/model_reference.py" && break
    done
fi
[ -f "${REFERENCE:-}" ] || { echo "bench-model: model_reference.py not found (set REFERENCE)" >&2; exit 2; }
[ -x "$exe" ] || { echo "bench-model: $exe not built" >&2; exit 2; }
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

# bench_shape SHAPE: ROUNDS rounds of ours and the peer on SHAPE's folder, then the summary.
# SHAPE empty: the default gpt2-small, run and printed as before shapes were added.
bench_shape() {
    local shape=$1 shape_args=() cache=() folder
    if [ -n "$shape" ]; then
        shape_args=(--shape "$shape")
        folder="${XDG_CACHE_HOME:-$HOME/.cache}/attention-explorer/bench-$shape"
    else
        [ -n "${CACHE_DIR:-}" ] && cache=(--cache-dir "$CACHE_DIR")
        folder="${CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/attention-explorer/bench-gpt2-small}"
    fi
    # The folder is written before the first timed round.
    "$exe" bench --model "${shape_args[@]}" --sizes 128 --reps 1 "${cache[@]}" >/dev/null
    for round in $(seq 1 "$ROUNDS"); do
        OMP_NUM_THREADS="$THREADS" "$exe" bench --model "${shape_args[@]}" --sizes "$SIZES" \
            --reps "$REPS" "${cache[@]}" | tee "$out/ours.$round"
        /usr/bin/python3 "$root/scripts/model_peer.py" "$folder" --sizes "$SIZES" \
            --reps "$PEER_REPS" --threads "$THREADS" --reference "$REFERENCE" | tee "$out/peer.$round"
    done
    /usr/bin/python3 - "$out" "$ROUNDS" "$shape" <<'PY'
import json, statistics, sys
out, rounds, shape = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def lines(path):
    return [json.loads(l) for l in open(path) if l.startswith("{")]
ratios, fractions, ours_ms, peer_ms, opens, rss, rates = {}, [], {}, {}, [], {}, {}
for r in range(1, rounds + 1):
    ours, peer = lines(f"{out}/ours.{r}"), lines(f"{out}/peer.{r}")
    sgemm = next(l["sgemm_gflops"] for l in ours if "sgemm_gflops" in l)
    mine = {l["L"]: l for l in ours if "L" in l}
    theirs = {l["L"]: l["full_ms"] for l in peer}
    row = []
    for L, l in sorted(mine.items()):
        ratios.setdefault(L, []).append(theirs[L] / l["full_ms"])
        ours_ms.setdefault(L, []).append(l["full_ms"]); peer_ms.setdefault(L, []).append(theirs[L])
        rates.setdefault(L, []).append(l["gflop"] / (l["full_ms"] / 1e3))
        opens.append(l["open_ms"])
        rss.setdefault(L, []).append(l["peak_rss_mb"] / (l["weights_mb"] + l["kept_mb"]))
        row.append(f"L={L}: {theirs[L] / l['full_ms']:.2f}x")
    top = max(mine)
    fraction = mine[top]["gflop"] / (mine[top]["full_ms"] / 1e3) / sgemm
    fractions.append(fraction)
    print(f"round {r}: " + ", ".join(row) + f"; L={top}: {fraction:.0%} of SGEMM ({sgemm} GFLOP/s)")
print("medians:")
for L in sorted(ratios):
    print(f"  L={L}: ours {statistics.median(ours_ms[L]):.1f} ms, peer {statistics.median(peer_ms[L]):.1f} ms, "
          f"peer/ours {statistics.median(ratios[L]):.2f}x, peak RSS {statistics.median(rss[L]):.2f}x (weights + kept)")
print(f"  SGEMM fraction at L={max(ratios)}: {statistics.median(fractions):.0%}; "
      f"open {statistics.median(opens):.0f} ms")
if shape:
    # Per GFLOP, for the comparison between shapes: each round's rate, and their median.
    for L in sorted(rates):
        each = ", ".join(f"{x:.1f}" for x in rates[L])
        print(f"  ours at L={L}: {statistics.median(rates[L]):.1f} GFLOP/s (rounds: {each})")
PY
}

if [ -z "${SHAPES:-}" ]; then
    bench_shape ""
else
    IFS=',' read -r -a shapes <<<"$SHAPES"
    # gpt2-small first, whether named or not: the per-GFLOP figures are read against it.
    for shape in gpt2-small "${shapes[@]}"; do
        [ "$shape" = gpt2-small ] && [ -n "${done_gpt2:-}" ] && continue
        [ "$shape" = gpt2-small ] && done_gpt2=1
        echo "== $shape"
        bench_shape "$shape"
    done
fi
