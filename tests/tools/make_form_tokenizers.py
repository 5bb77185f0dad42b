#!/usr/bin/env python3
"""Writes small tokenizer.json files of our own in tests/data/tokenizers/, one for each form the
decoder families' checkpoints ship, built from the same components as the real files but with a
vocabulary learnt here (standard library only). The real Llama, Mistral and Gemma files have
their own terms and stay out of the repository; scripts/check-tokenizers.sh checks those.

- llama-legacy-form/: Llama 2, Mistral v0.1, TinyLlama, Phi-3: normalizer Prepend("▁") +
  Replace(" " -> "▁"), no pre-tokenizer (the whole text is one word), BPE with byte fallback
  and fused unknowns, the decoder Replace, ByteFallback, Fuse, Strip.
- metaspace-first-form/: the newer SentencePiece conversion (legacy: false): no normalizer,
  Metaspace with prepend_scheme "first" and split false.
- gemma-form/: Gemma: Replace(" " -> "▁"), Split(" ", MergedWithPrevious), BPE with byte
  fallback, runs of newlines, tabs and "▁" as added tokens matched in the raw text.
- neox-form/: GPT-NeoX-20B's (Pythia, OLMo 1): NFC, ByteLevel with its own regex
  (use_regex absent, so true), runs of spaces as added tokens matched in the normalized text.
- tiktoken-split-form/: Llama 3's and OLMo 2's: a Split regex (digits in threes), then ByteLevel
  without its regex.
- old-wordpiece-no-type/, old-bpe-no-type/: files from before `model.type` was written.
- unigram-no-type/: an old Unigram file (no type, a list vocabulary, unk_id), read as Unigram.
- accents-punctuation-form/: the WordPiece model behind NFKD, StripAccents, Lowercase, a Replace
  of runs of spaces and Strip, then WhitespaceSplit and Punctuation.

The expected ids come from Hugging Face's tokenizers library: scripts/check-tokenizers.sh
--fixtures.
"""
import collections
import json
import os
import re

from make_small_tokenizers import CORPUS, added, write_json

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "data", "tokenizers")

# More words than the shared corpus, so that accents, digits and code get merges of their own.
EXTRA = """
Café naïve über résumé straße. Numbers 2024 and 12345 appear; x = 42 + 7.
def attention(query, key):
    return softmax(query @ key.T)
"""
METASPACE = "\u2581"


def learn_merges(words, count):
    """BPE merges learnt on `words` (lists of symbols, with their counts): the most frequent
    adjacent pair first, the smallest pair among equals, so that the result is reproducible."""
    splits = {word: list(symbols) for word, symbols in words}
    frequency = collections.Counter(word for word, _ in words)
    merges = []
    for _ in range(count):
        pairs = collections.Counter()
        for word, symbols in splits.items():
            for a, b in zip(symbols, symbols[1:]):
                pairs[(a, b)] += frequency[word]
        if not pairs:
            break
        best = max(sorted(pairs), key=lambda pair: pairs[pair])
        merges.append(best)
        for word, symbols in splits.items():
            merged, i = [], 0
            while i < len(symbols):
                if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == best:
                    merged.append(symbols[i] + symbols[i + 1])
                    i += 2
                else:
                    merged.append(symbols[i])
                    i += 1
            splits[word] = merged
    return merges


def metaspace_words():
    text = CORPUS + EXTRA
    return [(METASPACE + w, METASPACE + w) for w in text.split()]


def byte_characters():
    printable = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    table, shifted = {}, 0
    for b in range(256):
        if b in printable:
            table[b] = chr(b)
        else:
            table[b] = chr(0x100 + shifted)
            shifted += 1
    return table


def byte_level_words(pattern):
    table = byte_characters()
    words = re.findall(pattern, CORPUS + EXTRA)
    return [(w, "".join(table[b] for b in w.encode("utf-8"))) for w in words]


def sentencepiece_vocabulary(specials, extra_pieces, merges):
    """SentencePiece's layout as the converters write it: the special pieces, the 256 byte
    pieces, single characters, then each merge's result."""
    vocab = {}
    for piece in specials + ["<0x%02X>" % b for b in range(256)]:
        vocab.setdefault(piece, len(vocab))
    characters = sorted(set((CORPUS + EXTRA).replace("\n", "").replace(" ", "")))
    for piece in [METASPACE] + characters + extra_pieces:
        vocab.setdefault(piece, len(vocab))
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    return vocab


def bpe(vocab, merges, **options):
    model = {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
             "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
             "ignore_merges": False}
    model.update(options)
    model.update({"vocab": vocab, "merges": [[a, b] for a, b in merges]})
    return model


def template(prefix_token, prefix_id):
    return {"type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": prefix_token, "type_id": 0}},
                       {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": prefix_token, "type_id": 0}},
                     {"Sequence": {"id": "A", "type_id": 0}},
                     {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {prefix_token: {"id": prefix_token, "ids": [prefix_id],
                                              "tokens": [prefix_token]}}}


def replace(pattern, content):
    return {"type": "Replace", "pattern": {"String": pattern}, "content": content}


def tokenizer_file(added_tokens, normalizer, pre_tokenizer, post_processor, decoder, model):
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added_tokens,
            "normalizer": normalizer, "pre_tokenizer": pre_tokenizer,
            "post_processor": post_processor, "decoder": decoder, "model": model}


def llama_legacy_form():
    # "▁▁" and "▁▁▁▁" as Llama has them, so that runs of spaces merge.
    merges = [(METASPACE, METASPACE)] + learn_merges(metaspace_words(), 160)
    merges.append((METASPACE * 2, METASPACE * 2))
    vocab = sentencepiece_vocabulary(["<unk>", "<s>", "</s>"], [], merges)
    specials = [added(0, "<unk>"), added(1, "<s>"), added(2, "</s>")]
    normalizer = {"type": "Sequence", "normalizers": [
        {"type": "Prepend", "prepend": METASPACE}, replace(" ", METASPACE)]}
    decoder = {"type": "Sequence", "decoders": [
        replace(METASPACE, " "), {"type": "ByteFallback"}, {"type": "Fuse"},
        {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}
    model = bpe(vocab, merges, unk_token="<unk>", fuse_unk=True, byte_fallback=True)
    config = {"add_bos_token": True, "add_eos_token": False, "bos_token": "<s>",
              "eos_token": "</s>", "unk_token": "<unk>", "legacy": True,
              "tokenizer_class": "LlamaTokenizer"}
    return tokenizer_file(specials, normalizer, None, template("<s>", 1), decoder, model), config


def metaspace_first_form():
    merges = learn_merges(metaspace_words(), 160)
    vocab = sentencepiece_vocabulary(["<unk>", "<s>", "</s>"], [], merges)
    specials = [added(0, "<unk>"), added(1, "<s>"), added(2, "</s>")]
    metaspace = {"type": "Metaspace", "replacement": METASPACE, "prepend_scheme": "first",
                 "split": False}
    model = bpe(vocab, merges, unk_token="<unk>", fuse_unk=True, byte_fallback=True)
    config = {"add_bos_token": True, "add_eos_token": False, "bos_token": "<s>",
              "eos_token": "</s>", "unk_token": "<unk>", "legacy": False,
              "tokenizer_class": "LlamaTokenizer"}
    return tokenizer_file(specials, None, metaspace, template("<s>", 1), metaspace,
                          model), config


def gemma_form():
    merges = [(METASPACE, METASPACE)] + learn_merges(metaspace_words(), 160)
    specials = ["<pad>", "<eos>", "<bos>", "<unk>", "<mask>", "<start_of_turn>", "<end_of_turn>"]
    # Gemma's vocabulary has the newline and the tab as pieces, and runs of them as added tokens.
    runs = ["\n", "\n\n", "\n\n\n", METASPACE * 2, METASPACE * 3, "\t", "\t\t", "<b>", "</b>"]
    vocab = sentencepiece_vocabulary(specials, runs, merges)
    added_tokens = [added(vocab[t], t, special=t not in ("<mask>",)) for t in specials]
    added_tokens += [added(vocab[t], t, special=False) for t in runs]
    normalizer = replace(" ", METASPACE)
    pre_tokenizer = {"type": "Split", "pattern": {"String": " "},
                     "behavior": "MergedWithPrevious", "invert": False}
    decoder = {"type": "Sequence", "decoders": [
        replace(METASPACE, " "), {"type": "ByteFallback"}, {"type": "Fuse"}]}
    model = bpe(vocab, merges, unk_token="<unk>", fuse_unk=True, byte_fallback=True)
    config = {"add_bos_token": True, "add_eos_token": False, "bos_token": "<bos>",
              "eos_token": "<eos>", "pad_token": "<pad>", "unk_token": "<unk>",
              "tokenizer_class": "GemmaTokenizer"}
    return tokenizer_file(added_tokens, normalizer, pre_tokenizer, template("<bos>", 2), decoder,
                          model), config


GPT2_WORDS = r"'s|'t|'re|'ve|'m|'ll|'d| ?[^\W\d_]+| ?\d+| ?[^\s\w]+|\s+"


def byte_level_vocabulary(first, merges):
    vocab = {token: i for i, token in enumerate(first)}
    for c in byte_characters().values():
        vocab.setdefault(c, len(vocab))
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    return vocab


def neox_form():
    merges = learn_merges(byte_level_words(GPT2_WORDS), 200)
    vocab = byte_level_vocabulary(["<|endoftext|>", "<|padding|>"], merges)
    added_tokens = [added(0, "<|endoftext|>"), added(1, "<|padding|>")]
    # GPT-NeoX-20B's last ids are runs of 24 down to 2 spaces, matched after NFC.
    for length in range(24, 1, -1):
        added_tokens.append(added(len(vocab), " " * length, special=False, normalized=True))
        vocab[" " * length] = len(vocab)
    # As that file spells them: no use_regex (it defaults to true).
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True}
    model = bpe(vocab, merges)
    model["merges"] = [a + " " + b for a, b in merges]  # the older "LEFT RIGHT" spelling
    del model["ignore_merges"], model["byte_fallback"]
    config = {"add_bos_token": False, "add_eos_token": False, "bos_token": "<|endoftext|>",
              "eos_token": "<|endoftext|>", "unk_token": "<|endoftext|>",
              "tokenizer_class": "GPTNeoXTokenizer"}
    return tokenizer_file(added_tokens, {"type": "NFC"}, byte_level, byte_level, byte_level,
                          model), config


TIKTOKEN_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
                  r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")


def tiktoken_split_form():
    merges = learn_merges(byte_level_words(r"[^\W\d_]+|\d{1,3}| ?[^\s\w]+|\s+| [^\W\d_]+"), 200)
    vocab = byte_level_vocabulary([], merges)
    eos, pad = len(vocab), len(vocab) + 1
    added_tokens = [added(eos, "<|endoftext|>"), added(pad, "<|pad|>")]
    pre_tokenizer = {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": TIKTOKEN_SPLIT}, "behavior": "Isolated",
         "invert": False},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
         "use_regex": False}]}
    decoder = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
               "use_regex": True}
    post_processor = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False,
                      "use_regex": True}
    model = bpe(vocab, merges, ignore_merges=True)
    return tokenizer_file(added_tokens, None, pre_tokenizer, post_processor, decoder, model), {}


def old_wordpiece_no_type():
    with open(os.path.join(OUT, "wordpiece", "tokenizer.json"), encoding="utf-8") as f:
        tokenizer = json.load(f)
    del tokenizer["model"]["type"]
    return tokenizer


def accents_punctuation_form():
    # The wordpiece form's model behind the normalizers and pre-tokenizers of T5's and DeBERTa's
    # conversions: NFKD, StripAccents, Lowercase, Replace(" {2,}" -> " "), Strip; then
    # WhitespaceSplit and Punctuation (each mark a word of its own).
    with open(os.path.join(OUT, "wordpiece", "tokenizer.json"), encoding="utf-8") as f:
        tokenizer = json.load(f)
    tokenizer["normalizer"] = {"type": "Sequence", "normalizers": [
        {"type": "NFKD"}, {"type": "StripAccents"}, {"type": "Lowercase"},
        {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "},
        {"type": "Strip", "strip_left": True, "strip_right": True}]}
    tokenizer["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "WhitespaceSplit"}, {"type": "Punctuation", "behavior": "Isolated"}]}
    return tokenizer


def old_bpe_no_type():
    tokenizer, _ = neox_form()
    del tokenizer["model"]["type"]
    return tokenizer


def unigram_no_type():
    pieces = [["<unk>", 0.0], ["<s>", 0.0], ["</s>", 0.0], [METASPACE, -2.0],
              [METASPACE + "a", -3.0], ["a", -4.0], ["b", -4.5]]
    metaspace = {"type": "Metaspace", "replacement": METASPACE, "add_prefix_space": True}
    return tokenizer_file([added(0, "<unk>"), added(1, "<s>"), added(2, "</s>")], None,
                          metaspace, None, metaspace, {"unk_id": 0, "vocab": pieces})


def main():
    forms = {"llama-legacy-form": llama_legacy_form(), "metaspace-first-form":
             metaspace_first_form(), "gemma-form": gemma_form(), "neox-form": neox_form(),
             "tiktoken-split-form": tiktoken_split_form(),
             "old-wordpiece-no-type": (old_wordpiece_no_type(), {}),
             "old-bpe-no-type": (old_bpe_no_type(), {}),
             "unigram-no-type": (unigram_no_type(), {}),
             "accents-punctuation-form": (accents_punctuation_form(), {})}
    for folder, (tokenizer, config) in forms.items():
        os.makedirs(os.path.join(OUT, folder), exist_ok=True)
        write_json(os.path.join(OUT, folder, "tokenizer.json"), tokenizer)
        if config:
            write_json(os.path.join(OUT, folder, "tokenizer_config.json"), config)


if __name__ == "__main__":
    main()
