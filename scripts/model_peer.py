#!/usr/bin/env python3
"""The peer of `attention-explorer bench --model`: model_reference.py's forward pass, in float32,
PyTorch eager on the same threads, on the same model folder and the same token ids, keeping every
layer's and head's q, k, v, scores and weights as the explorer does.

  model_peer.py MODEL_DIR [--sizes 128,512,1024] [--reps 5] [--threads 2]
                [--reference PATH/model_reference.py]

Prints one JSON object a line: {"peer": "torch-float32", "L", "full_ms"}, the median of --reps
runs after one warm-up. Token ids are 0, 1, ..., L-1 modulo the vocabulary, as bench --model uses
(an encoder-decoder model takes them as its source and as its decoder input).
Needs Debian's python3-torch and python3-numpy (run with /usr/bin/python3).
"""
import argparse
import importlib.util
import json
import os
import statistics
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
p = argparse.ArgumentParser()
p.add_argument("model_dir")
p.add_argument("--sizes", default="128,512,1024")
p.add_argument("--reps", type=int, default=5)
p.add_argument("--threads", type=int, default=2)
p.add_argument("--reference", default=os.path.join(here, "..", "..", "shared", "reference",
                                                    "model_reference.py"))
a = p.parse_args()
# The same CPU kernels the one-layer peers get (../shared/bench/peers.py): torch's own BLAS does
# not read this, but NumPy's OpenBLAS, loaded by the reference, would fall back to generic kernels
# on a virtual machine without it.
if "OPENBLAS_CORETYPE" not in os.environ:
    flags = open("/proc/cpuinfo").read() if os.path.exists("/proc/cpuinfo") else ""
    if " avx512f" in flags:
        os.environ["OPENBLAS_CORETYPE"] = "SkylakeX"
    elif " avx2" in flags:
        os.environ["OPENBLAS_CORETYPE"] = "Haswell"
os.environ.setdefault("OMP_NUM_THREADS", str(a.threads))

# The reference finds its other families (decoder_families.py, encoder_families.py) beside it.
sys.path.insert(0, os.path.dirname(os.path.abspath(a.reference)))
spec = importlib.util.spec_from_file_location("model_reference", a.reference)
if spec is None or not os.path.exists(a.reference):
    sys.exit(f"model_peer: {a.reference}: model_reference.py not found (give --reference)")
reference = importlib.util.module_from_spec(spec)
spec.loader.exec_module(reference)
import torch  # noqa: E402  (after the reference, which sets float64 as the default)

torch.set_num_threads(a.threads)
model = reference.load(a.model_dir)
# float32 throughout: the weights, and every tensor the forward pass creates.
torch.set_default_dtype(torch.float32)
model.w = {name: (t.float() if t.is_floating_point() else t) for name, t in model.w.items()}
# The newer families build their rotary tables in float64 (the specification's precision): their
# rotated q and k come back in the tensor's own dtype, float32 here, as Hugging Face's do.
if "decoder_families" in sys.modules:
    families = sys.modules["decoder_families"]
    exact_rope = families.apply_rope
    families.apply_rope = lambda x, positions, spec: exact_rope(x, positions, spec).to(x.dtype)
# The llama layer's own rotary tables (model_reference.rope) are float64 too.
exact_llama_rope = reference.rope
reference.rope = lambda x, positions, inv_freq: exact_llama_rope(x, positions, inv_freq).to(x.dtype)
vocab = model.cfg["vocab"]

for length in (int(s) for s in a.sizes.split(",")):
    ids = [i % vocab for i in range(length)]
    # An encoder-decoder model reads the same ids as source and as decoder input, as bench does.
    decoder_ids = ids if getattr(model, "encoder_decoder", None) else None
    with torch.inference_mode():
        reference.forward(model, ids, decoder_ids=decoder_ids)  # warm-up
        times = []
        for _ in range(a.reps):
            start = time.perf_counter()
            reference.forward(model, ids, decoder_ids=decoder_ids)
            times.append((time.perf_counter() - start) * 1e3)
    print(json.dumps({"peer": "torch-float32", "L": length,
                      "full_ms": round(statistics.median(times), 3)}), flush=True)
