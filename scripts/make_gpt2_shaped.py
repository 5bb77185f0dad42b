#!/usr/bin/env python3
"""Writes a .safetensors file with GPT-2 small's 148 tensor names and shapes, for trying and
measuring the model import without downloading a model.

    make_gpt2_shaped.py OUT.safetensors [--random-layers N]

The token table (wte, 50257 x 768), the positions (wpe) and the first N layers (default 1) get
random F32 values (Gaussian, sigma 0.1; one block of values repeated, which is enough for timing);
every other tensor is left as a hole in a sparse file (zeros, no disk space). The file is about
498 MB long, as GPT-2 small's is. Standard library only.
"""
import array
import json
import random
import struct
import sys

D, VOCAB, POSITIONS, LAYERS = 768, 50257, 1024, 12


def tensors():
    yield "wte.weight", [VOCAB, D]
    yield "wpe.weight", [POSITIONS, D]
    for h in range(LAYERS):
        p = f"h.{h}."
        yield p + "ln_1.weight", [D]
        yield p + "ln_1.bias", [D]
        yield p + "attn.c_attn.weight", [D, 3 * D]
        yield p + "attn.c_attn.bias", [3 * D]
        yield p + "attn.c_proj.weight", [D, D]
        yield p + "attn.c_proj.bias", [D]
        yield p + "ln_2.weight", [D]
        yield p + "ln_2.bias", [D]
        yield p + "mlp.c_fc.weight", [D, 4 * D]
        yield p + "mlp.c_fc.bias", [4 * D]
        yield p + "mlp.c_proj.weight", [4 * D, D]
        yield p + "mlp.c_proj.bias", [D]
    yield "ln_f.weight", [D]
    yield "ln_f.bias", [D]


def main():
    out = sys.argv[1]
    random_layers = int(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[2] == "--random-layers" else 1
    random.seed(7)
    block = array.array("f", (random.gauss(0.0, 0.1) for _ in range(1 << 20)))
    if sys.byteorder != "little":
        block.byteswap()
    block = block.tobytes()

    header, offset, layout = {}, 0, []
    for name, shape in tensors():
        count = 1
        for d in shape:
            count *= d
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [offset, offset + 4 * count]}
        layout.append((name, offset, 4 * count))
        offset += 4 * count
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # the data starts 8-byte aligned, as the reference writer does
    start = 8 + len(text)

    with open(out, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for name, begin, size in layout:
            layer = int(name.split(".")[1]) if name.startswith("h.") else -1
            if layer >= random_layers:
                continue
            f.seek(start + begin)
            while size > 0:
                chunk = block[: min(size, len(block))]
                f.write(chunk)
                size -= len(chunk)
        f.truncate(start + offset)


main()
