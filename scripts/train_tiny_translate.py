"""Trains tiny-translate: a Marian (opus-mt-shaped) encoder-decoder that translates a toy English
into a toy French whose adjectives follow their nouns ("the red cat sees a dog" -> "le chat rouge
voit un chien"), so that its cross-attention shows the alignment of Bahdanau et al.'s figure: the
diagonal, crossed where an adjective and its noun swap places.

Writes MarianMTModel's files into OUT_DIR: config.json, model.safetensors (F32, names as
save_pretrained writes them, no position table: the sinusoids are computed), tokenizer.json (a
Unigram model over whole words with a Metaspace pre-tokenizer; one vocabulary for both sides) and
about.json. The training is PyTorch's, batched, written here after modeling_marian (post-norm
layers, q scaled by hd^-0.5, embeddings x sqrt(d), swish); the result is then checked against
shared/reference/model_reference.py: greedy decoding of held-out sentences must give their
translations.

  /usr/bin/python3 scripts/train_tiny_translate.py OUT_DIR --reference ../shared/reference [--steps N]
"""
import argparse
import json
import math
import os
import random
import sys

import numpy as np
import torch

SPECIALS = ["</s>", "<unk>", "<pad>"]  # eos 0, unk 1, pad 2 (also decoder_start_token_id)
DETERMINERS = {"the": "le", "a": "un"}
ADJECTIVES = {"red": "rouge", "big": "grand", "small": "petit", "old": "vieux", "green": "vert",
              "happy": "heureux", "black": "noir", "white": "blanc"}
NOUNS = {"cat": "chat", "dog": "chien", "bird": "oiseau", "house": "maison", "tree": "arbre",
         "car": "voiture", "man": "homme", "woman": "femme", "horse": "cheval", "boat": "bateau"}
VERBS = {"sees": "voit", "likes": "aime", "eats": "mange", "follows": "suit", "finds": "trouve"}
JOINS = {"and": "et"}
D_MODEL, HEADS, LAYERS, FFN, MAX_POSITIONS = 64, 4, 2, 128, 32


def vocabulary():
    words = []
    for table in (DETERMINERS, ADJECTIVES, NOUNS, VERBS, JOINS):
        for english, french in table.items():
            words += [english, french]
    return SPECIALS + words


def noun_phrase(rng):
    det, noun = rng.choice(list(DETERMINERS)), rng.choice(list(NOUNS))
    if rng.random() < 0.6:
        adj = rng.choice(list(ADJECTIVES))
        return [det, adj, noun], [DETERMINERS[det], NOUNS[noun], ADJECTIVES[adj]]
    return [det, noun], [DETERMINERS[det], NOUNS[noun]]


def sentence(rng):
    """One English clause or two joined by "and", and its French."""
    en, fr = [], []
    for clause in range(1 if rng.random() < 0.7 else 2):
        if clause:
            en.append("and")
            fr.append("et")
        s_en, s_fr = noun_phrase(rng)
        o_en, o_fr = noun_phrase(rng)
        verb = rng.choice(list(VERBS))
        en += s_en + [verb] + o_en
        fr += s_fr + [VERBS[verb]] + o_fr
    return en, fr


def sinusoids(n_pos, dim):
    # MarianSinusoidalPositionalEmbedding: sin in the first half of the columns, cos in the second
    enc = np.array([[p / np.power(10000, 2 * (j // 2) / dim) for j in range(dim)] for p in range(n_pos)])
    out = np.zeros((n_pos, dim), dtype=np.float32)
    half = dim // 2 if dim % 2 == 0 else dim // 2 + 1
    out[:, :half] = np.sin(enc[:, 0::2])
    out[:, half:] = np.cos(enc[:, 1::2])
    return torch.from_numpy(out)


class Marian(torch.nn.Module):
    """modeling_marian's MarianMTModel, batched, with HF's parameter names."""

    def __init__(self, vocab):
        super().__init__()
        d, f = D_MODEL, FFN
        self.p = torch.nn.ParameterDict()

        def param(name, *shape, init="normal"):
            t = torch.zeros(*shape)
            if init == "normal":
                torch.nn.init.normal_(t, std=0.02 if len(shape) == 2 and shape[0] == vocab else 1 / math.sqrt(shape[-1]))
            elif init == "ones":
                t.fill_(1.0)
            self.p[name.replace(".", "|")] = torch.nn.Parameter(t)

        param("model.shared.weight", vocab, d)
        for stack in ("encoder", "decoder"):
            for i in range(LAYERS):
                pre = f"model.{stack}.layers.{i}."
                attns = ["self_attn"] + (["encoder_attn"] if stack == "decoder" else [])
                for a in attns:
                    for x in ("q_proj", "k_proj", "v_proj", "out_proj"):
                        param(pre + f"{a}.{x}.weight", d, d)
                        param(pre + f"{a}.{x}.bias", d, init="zeros")
                    norm = "self_attn_layer_norm" if a == "self_attn" else "encoder_attn_layer_norm"
                    param(pre + f"{norm}.weight", d, init="ones")
                    param(pre + f"{norm}.bias", d, init="zeros")
                param(pre + "fc1.weight", f, d)
                param(pre + "fc1.bias", f, init="zeros")
                param(pre + "fc2.weight", d, f)
                param(pre + "fc2.bias", d, init="zeros")
                param(pre + "final_layer_norm.weight", d, init="ones")
                param(pre + "final_layer_norm.bias", d, init="zeros")
        self.register_buffer("positions", sinusoids(MAX_POSITIONS, d))

    def w(self, name):
        return self.p[name.replace(".", "|")]

    def lin(self, name, x):
        return x @ self.w(name + ".weight").T + self.w(name + ".bias")

    def ln(self, name, x):
        return torch.nn.functional.layer_norm(x, (D_MODEL,), self.w(name + ".weight"), self.w(name + ".bias"), 1e-5)

    def attend(self, pre, x, kv, allowed):
        B, S, _ = x.shape
        T, hd = kv.shape[1], D_MODEL // HEADS
        q = (self.lin(pre + ".q_proj", x) * hd ** -0.5).view(B, S, HEADS, hd).transpose(1, 2)
        k = self.lin(pre + ".k_proj", kv).view(B, T, HEADS, hd).transpose(1, 2)
        v = self.lin(pre + ".v_proj", kv).view(B, T, HEADS, hd).transpose(1, 2)
        scores = (q @ k.transpose(-1, -2)).masked_fill(~allowed[:, None], float("-inf"))
        ctx = (scores.softmax(-1) @ v).transpose(1, 2).reshape(B, S, D_MODEL)
        return self.lin(pre + ".out_proj", ctx)

    def embed(self, ids):
        return self.w("model.shared.weight")[ids] * math.sqrt(D_MODEL) + self.positions[: ids.shape[1]]

    def forward(self, src, src_keys, dec):
        act = torch.nn.functional.silu
        h = self.embed(src)
        allowed = src_keys[:, None, :].expand(-1, src.shape[1], -1)
        for i in range(LAYERS):
            p = f"model.encoder.layers.{i}."
            h = self.ln(p + "self_attn_layer_norm", h + self.attend(p + "self_attn", h, h, allowed))
            h = self.ln(p + "final_layer_norm", h + self.lin(p + "fc2", act(self.lin(p + "fc1", h))))
        enc = h
        S = dec.shape[1]
        causal = torch.tril(torch.ones(S, S, dtype=torch.bool))[None].expand(dec.shape[0], -1, -1)
        cross = src_keys[:, None, :].expand(-1, S, -1)
        h = self.embed(dec)
        for i in range(LAYERS):
            p = f"model.decoder.layers.{i}."
            h = self.ln(p + "self_attn_layer_norm", h + self.attend(p + "self_attn", h, h, causal))
            h = self.ln(p + "encoder_attn_layer_norm", h + self.attend(p + "encoder_attn", h, enc, cross))
            h = self.ln(p + "final_layer_norm", h + self.lin(p + "fc2", act(self.lin(p + "fc1", h))))
        return h @ self.w("model.shared.weight").T


def batch(rng, ids, size):
    pairs = [sentence(rng) for _ in range(size)]
    T = max(len(en) for en, _ in pairs) + 1
    S = max(len(fr) for _, fr in pairs) + 1
    pad = ids["<pad>"]
    src = torch.full((size, T), pad)
    dec = torch.full((size, S), pad)
    labels = torch.full((size, S), -100)
    for b, (en, fr) in enumerate(pairs):
        src_ids = [ids[w] for w in en] + [ids["</s>"]]
        tgt_ids = [ids[w] for w in fr] + [ids["</s>"]]
        src[b, : len(src_ids)] = torch.tensor(src_ids)
        dec[b, : len(tgt_ids)] = torch.tensor([pad] + tgt_ids[:-1])
        labels[b, : len(tgt_ids)] = torch.tensor(tgt_ids)
    return src, src != pad, dec, labels


def write_tokenizer(path, words):
    # A Unigram model over whole words (each "▁word" one piece) with T5's and Marian's layout:
    # Metaspace, </s> appended to every text.
    vocab = [[w, 0.0] for w in SPECIALS] + [["\u2581" + w, -1.0] for w in words[len(SPECIALS):]]
    added = [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True} for i, t in enumerate(SPECIALS)]
    single = [{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}]
    tok = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
           "normalizer": {"type": "Lowercase"},
           "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always",
                             "split": True},
           "post_processor": {"type": "TemplateProcessing", "single": single,
                              "pair": single + [{"Sequence": {"id": "B", "type_id": 0}},
                                                {"SpecialToken": {"id": "</s>", "type_id": 0}}],
                              "special_tokens": {"</s>": {"id": "</s>", "ids": [0], "tokens": ["</s>"]}}},
           "decoder": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
           "model": {"type": "Unigram", "unk_id": 1, "vocab": vocab, "byte_fallback": False}}
    with open(path, "w") as f:
        json.dump(tok, f, ensure_ascii=False, indent=1)
        f.write("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--reference", required=True, help="the folder of model_reference.py")
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=20261202)
    a = ap.parse_args()
    torch.manual_seed(a.seed)
    torch.set_num_threads(1)
    rng = random.Random(a.seed)
    words = vocabulary()
    ids = {w: i for i, w in enumerate(words)}
    vocab = 64
    model = Marian(vocab)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 200) * max(0.05, 1 - s / a.steps))
    for step in range(a.steps):
        src, keys, dec, labels = batch(rng, ids, 32)
        logits = model(src, keys, dec)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, vocab), labels.reshape(-1), ignore_index=-100)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 250 == 0 or step == a.steps - 1:
            print(f"step {step}: loss {loss.item():.4f}", flush=True)

    os.makedirs(a.out_dir, exist_ok=True)
    sys.path.insert(0, a.reference)
    import model_reference as mr

    tensors = {name.replace("|", "."): t.detach().float().contiguous() for name, t in model.p.items()}
    mr.write_safetensors(os.path.join(a.out_dir, "model.safetensors"), tensors)
    config = {"architectures": ["MarianMTModel"], "model_type": "marian", "vocab_size": vocab,
              "decoder_vocab_size": vocab, "d_model": D_MODEL, "encoder_layers": LAYERS,
              "decoder_layers": LAYERS, "encoder_attention_heads": HEADS, "decoder_attention_heads": HEADS,
              "encoder_ffn_dim": FFN, "decoder_ffn_dim": FFN, "activation_function": "swish",
              "max_position_embeddings": MAX_POSITIONS, "scale_embedding": True,
              "share_encoder_decoder_embeddings": True, "static_position_embeddings": True,
              "is_encoder_decoder": True, "pad_token_id": ids["<pad>"], "eos_token_id": ids["</s>"],
              "decoder_start_token_id": ids["<pad>"], "forced_eos_token_id": ids["</s>"],
              "torch_dtype": "float32"}
    with open(os.path.join(a.out_dir, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    write_tokenizer(os.path.join(a.out_dir, "tokenizer.json"), words)

    # The files as the reference reads them: greedy decoding of held-out sentences.
    m = mr.load(a.out_dir)
    test = random.Random(a.seed + 1)
    right = 0
    for _ in range(50):
        en, fr = sentence(test)
        src = [ids[w] for w in en] + [ids["</s>"]]
        out = [ids["<pad>"]]
        while len(out) < MAX_POSITIONS and out[-1] != ids["</s>"] or len(out) == 1:
            logits = mr.forward(m, src, decoder_ids=out)["logits"][-1]
            out.append(int(logits.argmax()))
            if len(out) >= MAX_POSITIONS:
                break
        got = [words[i] for i in out[1:-1]]
        right += got == fr
    print(f"held-out sentences translated exactly by the reference's greedy decoding: {right}/50")
    if right < 48:
        sys.exit("tiny-translate: not trained well enough")


if __name__ == "__main__":
    main()
