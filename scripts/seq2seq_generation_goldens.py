"""Greedy-decoding expectations for the encoder-decoder golden models (tests/data/seq2seq-models).

For each model folder and each expected-ids-*.json case beside it, this runs the float64 reference
(shared/reference/model_reference.py with seq2seq_families.py) on the case's encoder ids and mask,
from decoder_start_token_id, appending at each step the argmax of the reference's last logits row,
for STEPS steps or until eos_token_id. It writes expected-generate-*.json: the decoder ids, and per
step the reference's top two logits (so a test can see how clear each choice was).

  /usr/bin/python3 scripts/seq2seq_generation_goldens.py SHARED_REFERENCE_DIR MODEL_DIR... [--steps N]
"""
import argparse
import json
import os
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("reference_dir")
    ap.add_argument("model_dirs", nargs="+")
    ap.add_argument("--steps", type=int, default=8)
    a = ap.parse_args()
    sys.path.insert(0, a.reference_dir)
    import model_reference as mr

    for model_dir in a.model_dirs:
        m = mr.load(model_dir)
        cfg = json.load(open(os.path.join(model_dir, "config.json")))
        start, eos = cfg["decoder_start_token_id"], cfg.get("eos_token_id")
        for case in sorted(f for f in os.listdir(model_dir) if f.startswith("expected-ids-")):
            given = json.load(open(os.path.join(model_dir, case)))
            ids, mask = given["tokens"], given.get("attention_mask")
            decoder_ids, steps = [start], []
            for _ in range(a.steps):
                logits = mr.forward(m, ids, mask, decoder_ids=decoder_ids)["logits"][-1]
                top = logits.topk(2)
                steps.append({"top_ids": [int(i) for i in top.indices],
                              "top_logits": [float(x) for x in top.values]})
                decoder_ids.append(int(top.indices[0]))
                if decoder_ids[-1] == eos:
                    break
            out = {"tokens": ids, "decoder_start_token_id": start, "eos_token_id": eos,
                   "max_new_tokens": a.steps, "decoder_tokens": decoder_ids, "steps": steps}
            if mask is not None:
                out["attention_mask"] = mask
            name = case.replace("expected-ids-", "expected-generate-")
            with open(os.path.join(model_dir, name), "w") as f:
                json.dump(out, f, indent=1)
                f.write("\n")
            print(model_dir, name, decoder_ids)


if __name__ == "__main__":
    main()
