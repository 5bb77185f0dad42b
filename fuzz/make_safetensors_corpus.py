#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_safetensors (fuzz/corpus/fuzz_safetensors/): small valid files of
each float dtype the reader converts (F32, F16, BF16), files it opens but cannot read as matrices
(I64, BOOL, F64, a 3-D tensor), a GPT-2 shaped layer, and some broken ones. Standard library only;
run it from the repository root. The files are committed; rerun only to change the seeds."""
import json
import os
import struct

OUT = "fuzz/corpus/fuzz_safetensors"


def pack(dtype, values):
    if dtype == "F32":
        return struct.pack("<%df" % len(values), *values)
    if dtype == "F64":
        return struct.pack("<%dd" % len(values), *values)
    if dtype == "F16":
        return struct.pack("<%de" % len(values), *values)
    if dtype == "BF16":
        return b"".join(struct.pack("<f", v)[2:] for v in values)
    if dtype == "I64":
        return struct.pack("<%dq" % len(values), *[int(v) for v in values])
    if dtype == "BOOL":
        return bytes(1 if v else 0 for v in values)
    raise ValueError(dtype)


def safetensors(tensors, metadata=None):
    """tensors: list of (name, dtype, shape, values)."""
    header, data = {}, b""
    for name, dtype, shape, values in tensors:
        blob = pack(dtype, values)
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(blob)]}
        data += blob
    if metadata:
        header["__metadata__"] = metadata
    text = json.dumps(header, separators=(",", ":")).encode()
    return struct.pack("<Q", len(text)) + text + data


def values(n, scale=0.25):
    return [((i * 7) % 11 - 5) * scale for i in range(n)]


def layer(dtype, d=2):
    return [("wte", dtype, [3, d], values(3 * d)), ("q", dtype, [d, d], values(d * d)),
            ("k", dtype, [d, d], values(d * d, 0.5)), ("v", dtype, [d, d], values(d * d, 0.125)),
            ("o", dtype, [d, d], values(d * d))]


def write(name, blob):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(blob)


os.makedirs(OUT, exist_ok=True)
for dtype in ("F32", "F16", "BF16"):
    write("layer_%s.safetensors" % dtype.lower(), safetensors(layer(dtype)))
d = 2
write("gpt2_f32.safetensors", safetensors([
    ("wte", "F32", [3, d], values(3 * d)), ("wpe", "F32", [4, d], values(4 * d, 0.1)),
    ("ln_w", "F32", [d], [1.0] * d), ("ln_b", "F32", [d], [0.0] * d),
    ("c_attn", "F32", [d, 3 * d], values(3 * d * d)), ("c_attn_bias", "F32", [3 * d], values(3 * d))],
    metadata={"format": "pt"}))
write("scalar_and_vector_f16.safetensors",
      safetensors([("s", "F16", [], [2.5]), ("vec", "F16", [4], values(4))]))
write("other_dtypes.safetensors", safetensors([
    ("ids", "I64", [2, 2], [1, 2, 3, 4]), ("mask", "BOOL", [3], [1, 0, 1]),
    ("wide", "F64", [2], [1.0, -1.0]), ("cube", "F32", [2, 1, 2], values(4)),
    ("empty", "F32", [0, 3], [])]))
# Broken files: each is refused with its own message.
good = safetensors(layer("F32"))
write("bad_truncated.safetensors", good[:-5])
write("bad_header_length.safetensors", struct.pack("<Q", 10**12) + good[8:])
write("bad_not_json.safetensors", struct.pack("<Q", 6) + b"{nope}" + b"\0" * 8)
write("bad_nan.safetensors", safetensors([("wte", "F32", [1, 2], [float("nan"), 1.0])]))
overlap = json.dumps({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                      "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}}).encode()
write("bad_overlap.safetensors", struct.pack("<Q", len(overlap)) + overlap + b"\0" * 12)
huge = json.dumps({"a": {"dtype": "F32", "shape": [1025, 9000000000000000], "data_offsets": [0, 4]}}).encode()
write("bad_huge_shape.safetensors", struct.pack("<Q", len(huge)) + huge + b"\0" * 1100)
