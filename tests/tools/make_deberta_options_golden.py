#!/usr/bin/env python3
"""Builds tests/data/models/deberta-v2-tiny-options: deberta-v2-tiny with the options no shared
golden shows, and what the reference computes on it.

  /usr/bin/python3 tests/tools/make_deberta_options_golden.py REFERENCE_DIR GOLDEN_MODELS_DIR OUT_DIR

From GOLDEN_MODELS_DIR/deberta-v2-tiny: position_biased_input true (a learned position table
added to the embeddings, max_position_embeddings 32), type_vocab_size 2 (a token-type table),
pos_att_type ["c2p"] alone with share_att_key false (its own pos_key_proj), max_relative_positions
6 with no log buckets, and every tensor stored as BF16. The new tables and projections are drawn
from numpy's generator seeded 29 and rounded to BF16. Written: config.json, model.safetensors, and
the reference's results for expected-ids-A.json (ids [7, 41, 3, 59, 22, 15, 36]) and
expected-ids-B.json (the same ids with token types [0, 0, 0, 1, 1, 1, 1] and attention mask
[1, 1, 1, 1, 1, 1, 0]), each with its "token_types" and "attention_mask" as given.
Needs Debian's python3-torch and python3-numpy (run with /usr/bin/python3).
"""
import json
import os
import struct
import sys

import numpy as np
import torch


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        assert info["dtype"] == "F32", (name, info["dtype"])
        a, b = info["data_offsets"]
        out[name] = np.frombuffer(data[a:b], dtype="<f4").reshape(info["shape"]).astype(np.float32)
    return out


def bf16_bytes(x):
    # round to nearest even, as torch's .to(torch.bfloat16)
    t = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32)).to(torch.bfloat16)
    return t.view(torch.int16).numpy().astype("<i2").tobytes()


def write_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        blob = bf16_bytes(tensors[name])
        header[name] = {"dtype": "BF16", "shape": list(tensors[name].shape),
                        "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)


def main(reference_dir, goldens, out):
    sys.path.insert(0, reference_dir)
    import model_reference as mr
    source = os.path.join(goldens, "deberta-v2-tiny")
    cfg = json.load(open(os.path.join(source, "config.json")))
    cfg.update({"position_biased_input": True, "type_vocab_size": 2, "pos_att_type": ["c2p"],
                "share_att_key": False, "max_relative_positions": 6, "position_buckets": -1,
                "torch_dtype": "bfloat16"})
    tensors = read_safetensors(os.path.join(source, "model.safetensors"))
    rng = np.random.default_rng(29)
    d, layers = cfg["hidden_size"], cfg["num_hidden_layers"]
    draw = lambda *shape: (rng.standard_normal(shape) * 0.2).astype(np.float32)
    tensors["deberta.embeddings.position_embeddings.weight"] = draw(cfg["max_position_embeddings"], d)
    tensors["deberta.embeddings.token_type_embeddings.weight"] = draw(2, d)
    tensors["deberta.encoder.rel_embeddings.weight"] = draw(2 * 6, d)
    for i in range(layers):
        p = f"deberta.encoder.layer.{i}.attention.self.pos_key_proj."
        tensors[p + "weight"] = draw(d, d)
        tensors[p + "bias"] = draw(d)
    os.makedirs(out, exist_ok=True)
    json.dump(cfg, open(os.path.join(out, "config.json"), "w"), indent=2)
    write_safetensors(os.path.join(out, "model.safetensors"), tensors)
    ids = [7, 41, 3, 59, 22, 15, 36]
    cases = {"A": ({}, None, None), "B": ({}, [0, 0, 0, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1, 0])}
    model = mr.load(out)
    for name, (_, types, mask) in cases.items():
        res = mr.result_json(mr.forward(model, ids, mask, token_types=types))
        if mask is not None:
            res["attention_mask"] = mask
        with open(os.path.join(out, f"expected-ids-{name}.json"), "w") as f:
            f.write(json.dumps(res, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
