#!/usr/bin/env python3
"""Builds tests/data/scene-v2: one layer of each golden model as a version 2 scene, and what the
whole-model reference computes for that layer.

  /usr/bin/python3 tests/tools/make_scene_v2_fixtures.py REFERENCE_DIR GOLDEN_MODELS_DIR OUT_DIR

REFERENCE_DIR holds model_reference.py (PyTorch float64), GOLDEN_MODELS_DIR the tiny models of
every family. For each case the model runs on fixed token ids; the layer's residual input becomes
the scene's embeddings and its attention weights the scene's projections (in the X·W orientation:
nn.Linear weights transposed, GPT-2's Conv1D weights as stored). Written per case:

  NAME.scene.json      the layer as a version 2 scene (compact JSON, numbers in full precision)
  NAME.expected.json   {"heads": [{"q", "k", "v", "scores", "weights"} per query head],
                        "concat": Lq x heads·head_dim, "output": Lq x d_model}

q, k, v, scores and weights are the reference's own (forward()'s per-head records). concat and
output, which forward() keeps no record of, come from the attention sub-block recomputed here with
the reference's functions (norms, rope, attend); the script checks that this recomputation gives
forward()'s heads bit for bit before it writes anything.
Needs Debian's python3-torch and python3-numpy (run with /usr/bin/python3).
"""
import importlib.util
import json
import math
import os
import sys

IDS = [7, 41, 3, 59, 22, 15, 36]
BERT_PADDED_IDS, BERT_MASK = [7, 41, 3, 59, 22, 0, 0], [1, 1, 1, 1, 1, 0, 0]

# name, model folder, layer, ids, attention mask
CASES = [
    ("llama-gqa-layer0", "llama-tiny-gqa", 0, IDS, None),
    ("llama-gqa-layer1", "llama-tiny-gqa", 1, IDS, None),
    ("llama-rope-scaled-layer0", "llama-tiny-rope-scaled", 0, IDS, None),
    ("llama-rope-scaled-layer1", "llama-tiny-rope-scaled", 1, IDS, None),
    ("qwen3-layer0", "qwen3-tiny", 0, IDS, None),
    ("qwen3-layer1", "qwen3-tiny", 1, IDS, None),
    ("gpt2-layer1", "gpt2-tiny", 1, IDS, None),
    ("bert-layer1-padded", "bert-tiny", 1, BERT_PADDED_IDS, BERT_MASK),
]


def load_reference(directory):
    spec = importlib.util.spec_from_file_location(
        "model_reference", os.path.join(directory, "model_reference.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def rows(t):
    return t.tolist()


def vec(t):
    return t.reshape(-1).tolist()


def llama_case(mr, m, i, h, allowed, positions):
    """The scene of llama/qwen3 layer i with residual input h, and its recomputed attention."""
    import torch
    c, w, p = m.cfg, m.w, f"layers.{i}."
    T, H, KV, hd, eps = h.shape[0], c["n_head"], c["n_kv"], c["head_dim"], c["eps"]

    def lin(name, x):
        return x @ w[p + name + ".w"].T + w[p + name + ".b"]

    x = mr.rms_norm(h, w[p + "input_layernorm"], eps)
    q = lin("self_attn.q_proj", x).reshape(T, H, hd)
    k = lin("self_attn.k_proj", x).reshape(T, KV, hd)
    v = lin("self_attn.v_proj", x).reshape(T, KV, hd)
    if c["qk_norm"]:
        q, k = mr.rms_norm(q, w[p + "q_norm"], eps), mr.rms_norm(k, w[p + "k_norm"], eps)
    inv_freq = mr.rope_inv_freq(c)
    q, k = mr.rope(q, positions, inv_freq), mr.rope(k, positions, inv_freq)
    rep = [mr.kv_head(j, H, KV) for j in range(H)]
    heads, ctx = mr.attend(q, k[:, rep], v[:, rep], hd ** -0.5, allowed)
    output = lin("self_attn.o_proj", ctx)

    projections = {"mode": "separate",
                   "query": rows(w[p + "self_attn.q_proj.w"].T),
                   "key": rows(w[p + "self_attn.k_proj.w"].T),
                   "value": rows(w[p + "self_attn.v_proj.w"].T),
                   "output": rows(w[p + "self_attn.o_proj.w"].T)}
    if c["attn_bias"]:
        projections["bias"] = {n: vec(w[p + f"self_attn.{proj}_proj.b"])
                               for n, proj in (("query", "q"), ("key", "k"), ("value", "v"),
                                               ("output", "o"))}
    scene = {"norm": {"kind": "rmsnorm", "weight": vec(w[p + "input_layernorm"]), "eps": eps},
             "projections": projections, "heads": H, "head_dim": hd, "kv_heads": KV,
             "mask": {"causal": True},
             # the reference multiplies by hd^-0.5; the scene divides by sqrt(hd)
             "scale": {"kind": "divisor", "divisor": math.sqrt(hd)}}
    if c["qk_norm"]:
        scene["qk_norm"] = {"query_weight": vec(w[p + "q_norm"]),
                            "key_weight": vec(w[p + "k_norm"]), "eps": eps}
    s = c["rope_scaling"]
    rotary = {"theta": c["rope_theta"], "scaling": "none"}
    if c["rope_type"] == "linear":
        rotary.update(scaling="linear", factor=s["factor"])
    elif c["rope_type"] == "llama3":
        rotary.update(scaling="llama3", factor=s["factor"], low_freq_factor=s["low_freq_factor"],
                      high_freq_factor=s["high_freq_factor"],
                      original_max_position_embeddings=s["original_max_position_embeddings"])
    scene["rotary"] = rotary
    return scene, heads, ctx, output


def gpt2_case(mr, m, i, h, allowed):
    c, w, p = m.cfg, m.w, f"h.{i}."
    T, d, H, hd = h.shape[0], c["d"], c["n_head"], c["head_dim"]
    x = mr.layer_norm(h, w[p + "ln_1.w"], w[p + "ln_1.b"], c["eps"])
    qkv = x @ w[p + "attn.c_attn.w"] + w[p + "attn.c_attn.b"]
    q, k, v = (t.reshape(T, H, hd) for t in qkv.split(d, dim=-1))
    scale = 1.0 / math.sqrt(hd) if c["scale_attn_weights"] else 1.0
    divisor = math.sqrt(hd) if c["scale_attn_weights"] else 1.0
    if c["scale_by_layer"]:
        scale /= float(i + 1)
        divisor *= float(i + 1)
    heads, ctx = mr.attend(q, k, v, scale, allowed)
    output = ctx @ w[p + "attn.c_proj.w"] + w[p + "attn.c_proj.b"]
    W, b = w[p + "attn.c_attn.w"], w[p + "attn.c_attn.b"]
    scene = {"norm": {"kind": "layernorm", "weight": vec(w[p + "ln_1.w"]),
                      "bias": vec(w[p + "ln_1.b"]), "eps": c["eps"]},
             "projections": {"mode": "separate", "query": rows(W[:, :d]),
                             "key": rows(W[:, d:2 * d]), "value": rows(W[:, 2 * d:]),
                             "output": rows(w[p + "attn.c_proj.w"]),
                             "bias": {"query": vec(b[:d]), "key": vec(b[d:2 * d]),
                                      "value": vec(b[2 * d:]),
                                      "output": vec(w[p + "attn.c_proj.b"])}},
             "heads": H, "head_dim": hd, "mask": {"causal": True},
             "scale": {"kind": "divisor", "divisor": divisor}}
    return scene, heads, ctx, output


def bert_case(mr, m, i, h, allowed, mask):
    c, w, p = m.cfg, m.w, f"encoder.layer.{i}."
    T, H, hd = h.shape[0], c["n_head"], c["head_dim"]

    def lin(name, x):
        return x @ w[p + name + ".w"].T + w[p + name + ".b"]

    q, k, v = (lin("attention.self." + n, h).reshape(T, H, hd) for n in ("query", "key", "value"))
    heads, ctx = mr.attend(q, k, v, 1.0 / math.sqrt(hd), allowed)
    output = lin("attention.output.dense", ctx)  # before BERT's post-norm (+ input, LayerNorm)
    projections = {"mode": "separate"}
    bias = {}
    for key, name in (("query", "attention.self.query"), ("key", "attention.self.key"),
                      ("value", "attention.self.value"), ("output", "attention.output.dense")):
        projections[key] = rows(w[p + name + ".w"].T)
        bias[key] = vec(w[p + name + ".b"])
    projections["bias"] = bias
    scene = {"projections": projections, "heads": H, "head_dim": hd,
             "scale": {"kind": "divisor", "divisor": math.sqrt(hd)}}
    if mask is not None:
        scene["mask"] = {"padding": [a == 0 for a in mask]}
    return scene, heads, ctx, output


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    mr = load_reference(argv[0])
    import torch
    out_dir = argv[2]
    os.makedirs(out_dir, exist_ok=True)
    for name, folder, layer, ids, mask in CASES:
        m = mr.load(os.path.join(argv[1], folder))
        ref = mr.forward(m, ids, mask)
        h = ref["layers"][layer]["hidden_in"]
        T = len(ids)
        allowed = torch.ones(T, T, dtype=torch.bool)
        if m.family != "bert":
            allowed = torch.tril(allowed)
        if mask is not None:
            allowed = allowed & torch.tensor(mask, dtype=torch.bool)[None, :]
        if m.family in ("llama", "qwen3"):
            scene, heads, ctx, output = llama_case(mr, m, layer, h, allowed, torch.arange(T))
        elif m.family == "gpt2":
            scene, heads, ctx, output = gpt2_case(mr, m, layer, h, allowed)
        else:
            scene, heads, ctx, output = bert_case(mr, m, layer, h, allowed, mask)
        for got, want in zip(heads, ref["layers"][layer]["heads"]):
            for key in ("q", "k", "v", "scores", "weights"):
                if not torch.equal(got[key], want[key]):
                    sys.exit(f"{name}: the recomputed {key} differs from forward()'s")
        full = {"format": "attention-explorer/scene", "version": 2,
                "title": f"{folder} layer {layer}, ids {','.join(map(str, ids))}",
                "tokens": [str(t) for t in ids], "embeddings": rows(h), **scene}
        expected = {"heads": [{key: rows(hd[key]) for key in ("q", "k", "v", "scores", "weights")}
                              for hd in ref["layers"][layer]["heads"]],
                    "concat": rows(ctx), "output": rows(output)}
        for suffix, doc in (("scene", full), ("expected", expected)):
            with open(os.path.join(out_dir, f"{name}.{suffix}.json"), "w") as f:
                json.dump(doc, f, separators=(",", ":"))
                f.write("\n")
        print(f"{name}: {folder} layer {layer}")


if __name__ == "__main__":
    main(sys.argv[1:])
