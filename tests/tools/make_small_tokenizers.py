#!/usr/bin/env python3
"""Writes the two small tokenizers of our own in tests/data/tokenizers/ (standard library only):

- metaspace/: BPE on metaspace `▁` with byte fallback, as Llama 2, Mistral and Gemma have it:
  NFKC, Metaspace (prepend_scheme "first"), merges learnt here from a
  small corpus, <unk>/<s>/</s> plus a `<mask>` that takes the space before it (lstrip); the
  post-processor adds <s>, as tokenizer_config.json says too (add_bos_token; @lenml/tokenizers
  ignores add_eos_token, so the fixtures cannot check that one: tests/cli/test_tokenizers.cpp does).
- wordpiece/: BERT's WordPiece: BertNormalizer (lowercase, accents stripped, CJK spaced),
  BertPreTokenizer, BertProcessing; the same vocabulary also as a classic vocab.txt.

The expected ids come from an independent implementation: scripts/check-tokenizers.sh --fixtures.
"""
import collections
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "data", "tokenizers")

CORPUS = """
Attention is all you need. The quick brown fox jumps over the lazy dog.
Transformers compute attention between every pair of tokens in a sentence.
The query of one token is compared with the key of every other token, and the values
are mixed with those weights. Heads look at different relations: the previous token,
the first token, matching words, the end of a sentence. Teachers explain attention
on a projector; researchers save figures of heads for their papers.
I'm sure they're right, but we don't know what it'll show until we've seen it.
"""


def learn_merges(corpus, count):
    words = collections.Counter("\u2581" + w for w in corpus.split())
    splits = {w: list(w) for w in words}
    merges = []
    for _ in range(count):
        pairs = collections.Counter()
        for word, freq in words.items():
            s = splits[word]
            for a, b in zip(s, s[1:]):
                pairs[(a, b)] += freq
        if not pairs:
            break
        best = max(sorted(pairs), key=lambda p: pairs[p])
        merges.append(best)
        for word in words:
            s = splits[word]
            i, merged = 0, []
            while i < len(s):
                if i + 1 < len(s) and (s[i], s[i + 1]) == best:
                    merged.append(s[i] + s[i + 1])
                    i += 2
                else:
                    merged.append(s[i])
                    i += 1
            splits[word] = merged
    return merges


def added(token_id, content, special=True, lstrip=False, normalized=False):
    return {"id": token_id, "content": content, "single_word": False, "lstrip": lstrip,
            "rstrip": False, "normalized": normalized, "special": special}


def metaspace():
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for byte in range(256):
        vocab["<0x%02X>" % byte] = len(vocab)
    # Characters of the corpus, plus digits and a few non-ASCII letters; every other character
    # falls back to bytes.
    characters = sorted(set(CORPUS.replace("\n", "").replace(" ", "")) | set("0123456789éü"))
    for c in ["\u2581"] + characters:
        vocab.setdefault(c, len(vocab))
    merges = learn_merges(CORPUS, 180)
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    vocab["<mask>"] = len(vocab)
    tokenizer = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [added(0, "<unk>"), added(1, "<s>"), added(2, "</s>"),
                         added(vocab["<mask>"], "<mask>", lstrip=True)],
        "normalizer": {"type": "NFKC"},
        # (No Digits here: @lenml/tokenizers splits only ASCII digits and prepends `▁` to every
        # piece after one, where the reference library follows Unicode and the first piece.)
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            # As transformers' Llama converter writes it; add_prefix_space for readers of the
            # older format (prepend_scheme decides).
            {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first",
             "split": False, "add_prefix_space": True}]},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                       {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                     {"Sequence": {"id": "A", "type_id": 0}},
                     {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
            {"type": "ByteFallback"}, {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
        "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>",
                  "continuing_subword_prefix": None, "end_of_word_suffix": None,
                  "fuse_unk": True, "byte_fallback": True, "ignore_merges": False,
                  "vocab": vocab, "merges": [[a, b] for a, b in merges]},
    }
    config = {"add_bos_token": True, "add_eos_token": False, "bos_token": "<s>",
              "eos_token": "</s>", "unk_token": "<unk>", "legacy": True,
              "tokenizer_class": "LlamaTokenizer"}
    return tokenizer, config


def wordpiece():
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tokens += list("abcdefghijklmnopqrstuvwxyz0123456789.,;:!?'\"()-_/$%&*+=<>@#[]{}")
    tokens += ["##" + c for c in "abcdefghijklmnopqrstuvwxyz0123456789"]
    tokens += ["注", "意", "力", "世", "界"]
    words = ("the a an is are all you need attention head heads query key value token "
             "tokens sentence quick brown fox jump over lazy dog teacher teach projector "
             "figure paper i we they don it will show cafe naive uber resume hello world "
             "un trans former model").split()
    tokens += words
    tokens += ["##s", "##ing", "##ed", "##er", "##ers", "##ization", "##ize", "##able", "##ly",
               "##tion", "##ent", "##former", "##formers", "##believ", "##m", "##re", "##ll",
               "##ve", "##t", "##'", "##n"]
    seen, vocab = set(), []
    for t in tokens:
        if t not in seen:
            seen.add(t)
            vocab.append(t)
    tokenizer = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [added(i, t) for i, t in enumerate(vocab[:5])],
        "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                       "strip_accents": None, "lowercase": True},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {"type": "BertProcessing", "sep": ["[SEP]", 3], "cls": ["[CLS]", 2]},
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100,
                  "vocab": {t: i for i, t in enumerate(vocab)}},
    }
    config = {"do_lower_case": True, "tokenizer_class": "BertTokenizer", "unk_token": "[UNK]",
              "cls_token": "[CLS]", "sep_token": "[SEP]"}
    return tokenizer, config, vocab


def write_json(path, value):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(value, f, ensure_ascii=False, indent=1)
        f.write("\n")


def main():
    tokenizer, config = metaspace()
    os.makedirs(os.path.join(OUT, "metaspace"), exist_ok=True)
    write_json(os.path.join(OUT, "metaspace", "tokenizer.json"), tokenizer)
    write_json(os.path.join(OUT, "metaspace", "tokenizer_config.json"), config)
    tokenizer, config, vocab = wordpiece()
    for folder in ["wordpiece", "wordpiece-classic"]:
        os.makedirs(os.path.join(OUT, folder), exist_ok=True)
        write_json(os.path.join(OUT, folder, "tokenizer_config.json"), config)
    write_json(os.path.join(OUT, "wordpiece", "tokenizer.json"), tokenizer)
    with open(os.path.join(OUT, "wordpiece-classic", "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("".join(t + "\n" for t in vocab))


if __name__ == "__main__":
    main()
