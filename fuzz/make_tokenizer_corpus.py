#!/usr/bin/env python3
"""Writes the seed corpora of fuzz_tokenizer_json, fuzz_tokenizer_vocab and fuzz_charsmap (standard
library only)
from the tokenizers in tests/data/tokenizers/: our small ones as they are, a byte-level BPE cut
down from GPT-2's first 300 merges (with a Split regex, ByteLevel, NFC, a template and added
tokens), and the classic files of both kinds, small."""
import base64
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "tests", "data", "tokenizers")


def byte_characters():
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    table, shifted = {}, 0
    for b in range(256):
        if b in printable:
            table[b] = chr(b)
        else:
            table[b] = chr(0x100 + shifted)
            shifted += 1
    return table


def small_gpt2(count=300):
    with open(os.path.join(DATA, "gpt2", "merges.txt"), encoding="utf-8") as f:
        merges = [line.split() for line in f.read().split("\n")[1:count + 1]]
    vocab = {}
    for c in byte_characters().values():
        vocab.setdefault(c, len(vocab))
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    vocab["<|endoftext|>"] = len(vocab)
    return vocab, merges


def write(target, name, data):
    folder = os.path.join(HERE, "corpus", target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def main():
    # Our small tokenizers, one of each form the decoder families ship (legacy Llama, Metaspace
    # first, Gemma, GPT-NeoX, tiktoken Split), the files without model.type and an old Unigram.
    names = ["metaspace", "wordpiece", "llama-legacy-form", "metaspace-first-form", "gemma-form",
             "neox-form", "tiktoken-split-form", "old-wordpiece-no-type", "old-bpe-no-type",
             "unigram-no-type"]
    for name in names:
        with open(os.path.join(DATA, name, "tokenizer.json"), "rb") as f:
            write("fuzz_tokenizer_json", name + ".json", f.read())
    with open(os.path.join(DATA, "metaspace", "tokenizer_config.json"), "rb") as f:
        config = f.read()
    with open(os.path.join(DATA, "metaspace", "tokenizer.json"), "rb") as f:
        write("fuzz_tokenizer_json", "metaspace-with-config.json", f.read() + b"\0" + config)
    vocab, merges = small_gpt2()
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                  "use_regex": False}
    tokenizer = {
        "added_tokens": [{"id": vocab["<|endoftext|>"], "content": "<|endoftext|>",
                          "single_word": False, "lstrip": False, "rstrip": True,
                          "normalized": False, "special": True}],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "NFC"}, {"type": "Replace", "pattern": {"Regex": "\\s{3,}"}, "content": "  "}]},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex":
                "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
             "behavior": "Isolated", "invert": False},
            byte_level]},
        "post_processor": {"type": "TemplateProcessing",
                           "single": [{"Sequence": {"id": "A", "type_id": 0}},
                                      {"SpecialToken": {"id": "<|endoftext|>", "type_id": 0}}],
                           "special_tokens": {"<|endoftext|>": {"id": "<|endoftext|>",
                                                                "ids": [vocab["<|endoftext|>"]]}}},
        "decoder": byte_level,
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "ignore_merges": True,
                  "vocab": vocab, "merges": [" ".join(m) for m in merges]},
    }
    write("fuzz_tokenizer_json", "byte-level.json", json.dumps(tokenizer, ensure_ascii=False).encode())
    vocab_json = json.dumps(vocab, ensure_ascii=False).encode()
    merges_txt = ("#version: 0.2\n" + "".join(" ".join(m) + "\n" for m in merges)).encode()
    write("fuzz_tokenizer_vocab", "gpt2", b"\0" + vocab_json + b"\0" + merges_txt)
    write("fuzz_tokenizer_vocab", "gpt2-config",
          b"\0" + vocab_json + b"\0" + merges_txt + b"\0" + b'{"add_prefix_space": true}')
    with open(os.path.join(DATA, "wordpiece-classic", "vocab.txt"), "rb") as f:
        vocab_txt = f.read()
    write("fuzz_tokenizer_vocab", "bert", b"\1" + vocab_txt)
    write("fuzz_tokenizer_vocab", "bert-cased", b"\1" + vocab_txt + b"\0" + b'{"do_lower_case": false}')
    # Unigram: two of the kit's smaller files (byte fallback; DeBERTa-v3's lowercasing and added
    # token outside the vocabulary), and for fuzz_charsmap the kit's two real charsmaps as the raw
    # blobs the target takes.
    for name in ["xlmr-byte-fallback", "debertav3-identity-lower"]:
        with open(os.path.join(DATA, "unigram", name, "tokenizer.json"), "rb") as f:
            write("fuzz_tokenizer_json", "unigram-" + name + ".json", f.read())
    for name in ["xlmr-nmt-nfkc", "xlmr-nfkc-cf"]:
        with open(os.path.join(DATA, "unigram", name, "tokenizer.json"), encoding="utf-8") as f:
            normalizer = json.load(f)["normalizer"]
        charsmap = next(n for n in normalizer["normalizers"] if n["type"] == "Precompiled")
        write("fuzz_charsmap", name, base64.b64decode(charsmap["precompiled_charsmap"]))


if __name__ == "__main__":
    main()
