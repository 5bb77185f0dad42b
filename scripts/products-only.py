#!/usr/bin/env python3
"""The products of one model pass alone, in NumPy (float32, OpenBLAS), and nothing else.

  products-only.py CONFIG_JSON [--sizes 1024] [--reps 3] [--threads 2]

The products are exactly those `bench --model` counts in its GFLOP (bench/model_benchmark.cpp,
forwardGflop): per layer Q, K and V in one product, the output projection, the MLP's two or (gated)
three, q·kᵀ and weights·v of every head over the whole L x L map; then the LM head over every
position. Nothing else runs: no norm, softmax, activation, residual or kept map. Their rate is the
ceiling a whole pass can reach as a share of the best SGEMM, which the script measures too
(2048³, as `bench` does). Prints one JSON object a line.
Sets OPENBLAS_CORETYPE from the CPU's instruction sets unless it is already set, as
../shared/bench/peers.py does.
"""
import argparse, json, os, statistics, time

p = argparse.ArgumentParser()
p.add_argument("config")
p.add_argument("--sizes", default="1024")
p.add_argument("--reps", type=int, default=3)
p.add_argument("--threads", type=int, default=2)
a = p.parse_args()
os.environ.setdefault("OPENBLAS_NUM_THREADS", str(a.threads))
if "OPENBLAS_CORETYPE" not in os.environ:
    flags = open("/proc/cpuinfo").read()
    if " avx512f" in flags:
        os.environ["OPENBLAS_CORETYPE"] = "SkylakeX"
    elif " avx2" in flags:
        os.environ["OPENBLAS_CORETYPE"] = "Haswell"
import numpy as np

c = json.load(open(a.config))
d = c.get("hidden_size", c.get("n_embd"))
layers = c.get("num_hidden_layers", c.get("n_layer"))
heads = c.get("num_attention_heads", c.get("n_head"))
kv_heads = c.get("num_key_value_heads", heads)
head_dim = c.get("head_dim", d // heads)
inner = c.get("intermediate_size", c.get("n_inner") or 4 * d)
vocab = c["vocab_size"]
gated = c.get("model_type") in ("llama", "qwen2", "qwen3", "mistral", "gemma", "gemma2", "olmo")
mlp_matrices = 3 if gated else 2
q_width, kv_width = heads * head_dim, kv_heads * head_dim


def median_ms(fn, reps):
    fn()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def best_sgemm_gflops(reps):
    n = 2048
    x = np.ones((n, n), np.float32)
    y = np.ones((n, n), np.float32)
    out = np.empty((n, n), np.float32)
    return 2 * n**3 / median_ms(lambda: np.matmul(x, y, out=out), reps) / 1e6


rng = np.random.default_rng(0)


def weights(rows, cols):
    return rng.standard_normal((rows, cols), dtype=np.float32)


for L in [int(s) for s in a.sizes.split(",")]:
    x = weights(L, d)
    qkv_w, out_w = weights(d, q_width + 2 * kv_width), weights(q_width, d)
    up = [weights(d, inner) for _ in range(mlp_matrices - 1)]
    down = weights(inner, d)
    head_w = weights(d, vocab)
    qkv = np.empty((L, q_width + 2 * kv_width), np.float32)
    q = np.ascontiguousarray(rng.standard_normal((heads, L, head_dim), dtype=np.float32))
    k_t = np.ascontiguousarray(rng.standard_normal((heads, head_dim, L), dtype=np.float32))
    v = np.ascontiguousarray(rng.standard_normal((heads, L, head_dim), dtype=np.float32))
    maps = np.empty((heads, L, L), np.float32)
    context = np.empty((heads, L, head_dim), np.float32)
    hidden = np.empty((L, inner), np.float32)
    projected = np.empty((L, d), np.float32)
    logits = np.empty((L, vocab), np.float32)

    def products():
        for _ in range(layers):
            np.matmul(x, qkv_w, out=qkv)
            np.matmul(q, k_t, out=maps)
            np.matmul(maps, v, out=context)
            np.matmul(context.transpose(1, 0, 2).reshape(L, q_width), out_w, out=projected)
            for w in up:
                np.matmul(x, w, out=hidden)
            np.matmul(hidden, down, out=projected)
        np.matmul(x, head_w, out=logits)

    gflop = 2.0 * (layers * (L * d * (q_width + 2 * kv_width) + L * q_width * d +
                             mlp_matrices * L * d * inner + 2.0 * L * L * q_width) +
                   L * d * vocab) / 1e9
    ms = median_ms(products, a.reps)
    best = best_sgemm_gflops(a.reps)
    print(json.dumps({"config": a.config, "L": L, "products_ms": round(ms, 1),
                      "gflop": round(gflop, 2), "gflops": round(gflop / ms * 1e3, 1),
                      "best_sgemm_gflops": round(best, 1),
                      "share": round(gflop / ms * 1e3 / best, 3)}), flush=True)
