#!/usr/bin/python3
"""Same-session comparison of the engine with NumPy/OpenBLAS, as docs/performance.md quotes it.

  /usr/bin/python3 scripts/compare_peers.py [--rounds 5] [--reps 15] [--sizes 64,512,2048]
                                            [--peers ../shared/bench/peers.py]
                                            [--binary build/app/attention-explorer]

Runs peers.py (NumPy only) and `attention-explorer bench` in turn, --rounds times, so both see
the same machine: a shared machine drifts by 10-20% within minutes, and a ratio taken from one
pair of runs moves with it. Prints each round's figures and ratios, then the median ratio over
the rounds of full_ms (NumPy / engine), of NumPy's rescale over the engine's rescale and mask, the
engine's rescale, mask and edit over its own full pass, and the full pass as a share of SGEMM,
counting 8·L·d² + 4·L²·d FLOPs.

Needs python3-numpy and libopenblas0-pthread (for the peer); nothing beyond the standard library
here.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys


def json_lines(command, env=None):
    out = subprocess.run(command, check=True, capture_output=True, text=True, env=env).stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--sizes", default="64,512,2048")
    parser.add_argument("--d", type=int, default=768)
    parser.add_argument("--heads", type=int, default=12)
    parser.add_argument("--peers", default=os.path.join("..", "shared", "bench", "peers.py"))
    parser.add_argument("--binary", default=os.path.join("build", "app", "attention-explorer"))
    args = parser.parse_args()
    if not os.path.exists(args.peers):
        sys.exit(f"compare_peers: {args.peers}: no such file (give --peers)")
    if not os.access(args.binary, os.X_OK):
        sys.exit(f"compare_peers: {args.binary}: not built (run scripts/setup.sh, or give --binary)")

    common = ["--sizes", args.sizes, "--d", str(args.d), "--heads", str(args.heads),
              "--reps", str(args.reps)]
    # peers.py also times PyTorch where it is installed; hide it so only NumPy runs, quickly.
    env = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(__file__), "no_torch"))
    ratios = {}  # (L, name) -> [ratio per round]
    for round_number in range(1, args.rounds + 1):
        numpy = {row["L"]: row for row in json_lines([sys.executable, args.peers] + common, env)
                 if row.get("peer") == "numpy"}
        engine_rows = json_lines([args.binary, "bench"] + common)
        sgemm = next(row["sgemm_gflops"] for row in engine_rows if "sgemm_gflops" in row)
        engine = {row["L"]: row for row in engine_rows if "L" in row}
        for length, row in sorted(engine.items()):
            peer = numpy[length]
            flops = 8.0 * length * args.d ** 2 + 4.0 * length ** 2 * args.d
            figures = {
                "full_x_numpy": peer["full_ms"] / row["full_ms"],
                "rescale_x_numpy_rescale": peer["rescale_ms"] / row["rescale_ms"],
                "mask_x_numpy_rescale": peer["rescale_ms"] / row["mask_ms"],
                "rescale_of_full": row["rescale_ms"] / row["full_ms"],
                "mask_of_full": row["mask_ms"] / row["full_ms"],
                "edit_of_full": row["edit_ms"] / row["full_ms"],
                "share_of_sgemm": flops / (row["full_ms"] * 1e6) / sgemm,
            }
            for name, value in figures.items():
                ratios.setdefault((length, name), []).append(value)
            print(json.dumps({"round": round_number, "L": length,
                              "numpy_full_ms": peer["full_ms"],
                              "numpy_rescale_ms": peer["rescale_ms"],
                              **{k: row[k] for k in ("full_ms", "rescale_ms", "mask_ms",
                                                     "heads_ms", "edit_ms")},
                              "sgemm_gflops": sgemm,
                              **{k: round(v, 3) for k, v in figures.items()}}), flush=True)
    for (length, name), values in sorted(ratios.items()):
        print(json.dumps({"L": length, "figure": name, "rounds": len(values),
                          "median": round(statistics.median(values), 3),
                          "min": round(min(values), 3), "max": round(max(values), 3)}))


if __name__ == "__main__":
    main()
