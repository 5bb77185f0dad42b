#include "core/model/family.h"

#include <algorithm>

#include "core/model/model.h"

namespace ae::model {
namespace {

// The tensors of one config, in the order they are listed: a name after the prefix, its shape,
// the slot it fills, and an older spelling it may have instead.
class TensorList {
public:
    TensorList(const Config& c, ModelWeights& w) : w_(w) {
        w.layers.assign(static_cast<std::size_t>(c.layers), LayerWeights{});
    }
    void add(std::string name, std::vector<long long> shape, TensorRef* slot,
             std::string alias = {}) {
        TensorSpec spec;
        spec.name = std::move(name);
        spec.alias = std::move(alias);
        spec.shape = std::move(shape);
        spec.slot = slot;
        specs_.push_back(std::move(spec));
    }
    // A tensor the folder may leave out (its slot then stays empty).
    void optional(std::string name, std::vector<long long> shape, TensorRef* slot) {
        add(std::move(name), std::move(shape), slot);
        specs_.back().optional = true;
    }
    // nn.Linear's weight [out, in] and, when the model has it, its bias [out].
    void linear(const std::string& name, long long out, long long in, TensorRef* weight,
                TensorRef* bias, bool hasBias = true) {
        add(name + ".weight", {out, in}, weight);
        if (hasBias) add(name + ".bias", {out}, bias);
    }
    // A LayerNorm's weight and bias, [size] each.
    void layerNorm(const std::string& name, long long size, TensorRef* weight, TensorRef* bias) {
        add(name + ".weight", {size}, weight);
        add(name + ".bias", {size}, bias);
    }
    // A decoder's LM head when it is not tied to the token table: never prefixed.
    void languageModelHead(const Config& c, std::string name = "lm_head.weight",
                           std::string alias = {}) {
        if (!c.tieWordEmbeddings) {
            add(std::move(name), {c.vocab, c.hidden}, &w_.lmHead, std::move(alias));
            specs_.back().topLevel = true;
        }
    }
    // Another name of the tensor listed last (TensorSpec::copies).
    void copy(std::string name, std::string why, bool topLevel = false, bool mayBeRead = true) {
        specs_.back().copies.push_back({std::move(name), topLevel, std::move(why), mayBeRead});
    }
    // A tensor at the top level, never prefixed (lm_head.weight, final_logits_bias).
    void topLevel(std::string name, std::vector<long long> shape, TensorRef* slot, bool optional,
                  std::string whyRequired = {}) {
        TensorSpec spec;
        spec.name = std::move(name);
        spec.shape = std::move(shape);
        spec.topLevel = true;
        spec.slot = slot;
        spec.optional = optional;
        spec.whyRequired = std::move(whyRequired);
        specs_.push_back(std::move(spec));
    }
    LayerWeights& layer(int i) { return w_.layers[static_cast<std::size_t>(i)]; }
    std::vector<TensorSpec> take() { return std::move(specs_); }

private:
    ModelWeights& w_;
    std::vector<TensorSpec> specs_;
};

// GPT2LMHeadModel (transformer.*); its Conv1D weights are [in, out].
std::vector<TensorSpec> gpt2Names(const Config& c, ModelWeights& w) {
    TensorList list(c, w);
    const long long d = c.hidden, I = c.intermediate;
    list.add("wte.weight", {c.vocab, d}, &w.tokenEmbedding);
    list.add("wpe.weight", {c.positions, d}, &w.positionEmbedding);
    for (int i = 0; i < c.layers; ++i) {
        const std::string p = "h." + std::to_string(i) + ".";
        LayerWeights& l = list.layer(i);
        list.add(p + "ln_1.weight", {d}, &l.norm1);
        list.add(p + "ln_1.bias", {d}, &l.norm1Bias);
        list.add(p + "ln_2.weight", {d}, &l.norm2);
        list.add(p + "ln_2.bias", {d}, &l.norm2Bias);
        list.add(p + "attn.c_attn.weight", {d, 3 * d}, &l.qkv);
        list.add(p + "attn.c_attn.bias", {3 * d}, &l.qkvBias);
        list.add(p + "attn.c_proj.weight", {d, d}, &l.output);
        list.add(p + "attn.c_proj.bias", {d}, &l.outputBias);
        list.add(p + "mlp.c_fc.weight", {d, I}, &l.up);
        list.add(p + "mlp.c_fc.bias", {I}, &l.upBias);
        list.add(p + "mlp.c_proj.weight", {I, d}, &l.down);
        list.add(p + "mlp.c_proj.bias", {d}, &l.downBias);
    }
    list.add("ln_f.weight", {d}, &w.finalNorm);
    list.add("ln_f.bias", {d}, &w.finalNormBias);
    list.languageModelHead(c);
    return list.take();
}

// BertModel (bert.*). BertFor* checkpoints (bert-base-uncased) spell LayerNorm's weight and bias
// gamma and beta.
std::vector<TensorSpec> bertNames(const Config& c, ModelWeights& w) {
    TensorList list(c, w);
    const long long d = c.hidden, I = c.intermediate;
    auto norm = [&](const std::string& p, TensorRef* weight, TensorRef* bias) {
        list.add(p + "LayerNorm.weight", {d}, weight, p + "LayerNorm.gamma");
        list.add(p + "LayerNorm.bias", {d}, bias, p + "LayerNorm.beta");
    };
    list.add("embeddings.word_embeddings.weight", {c.vocab, d}, &w.tokenEmbedding);
    list.add("embeddings.position_embeddings.weight", {c.positions, d}, &w.positionEmbedding);
    list.add("embeddings.token_type_embeddings.weight", {c.tokenTypes, d}, &w.tokenTypeEmbedding);
    norm("embeddings.", &w.embeddingNorm, &w.embeddingNormBias);
    for (int i = 0; i < c.layers; ++i) {
        const std::string p = "encoder.layer." + std::to_string(i) + ".";
        LayerWeights& l = list.layer(i);
        list.linear(p + "attention.self.query", d, d, &l.query, &l.queryBias);
        list.linear(p + "attention.self.key", d, d, &l.key, &l.keyBias);
        list.linear(p + "attention.self.value", d, d, &l.value, &l.valueBias);
        list.linear(p + "attention.output.dense", d, d, &l.output, &l.outputBias);
        list.linear(p + "intermediate.dense", I, d, &l.up, &l.upBias);
        list.linear(p + "output.dense", d, I, &l.down, &l.downBias);
        norm(p + "attention.output.", &l.norm1, &l.norm1Bias);
        norm(p + "output.", &l.norm2, &l.norm2Bias);
    }
    return list.take();
}

// DistilBertModel (distilbert.*): BERT's layers under other names (q_lin, sa_layer_norm, ffn.lin1,
// output_layer_norm), no token types. With sinusoidal_pos_embds the position table may be left
// out: the loader computes it.
std::vector<TensorSpec> distilbertNames(const Config& c, ModelWeights& w) {
    TensorList list(c, w);
    const long long d = c.hidden, I = c.intermediate;
    auto norm = [&](const std::string& name, TensorRef* weight, TensorRef* bias) {
        list.add(name + ".weight", {d}, weight, name + ".gamma");
        list.add(name + ".bias", {d}, bias, name + ".beta");
    };
    list.add("embeddings.word_embeddings.weight", {c.vocab, d}, &w.tokenEmbedding);
    if (c.sinusoidalPositionTable)
        list.optional("embeddings.position_embeddings.weight", {c.positions, d},
                      &w.positionEmbedding);
    else
        list.add("embeddings.position_embeddings.weight", {c.positions, d}, &w.positionEmbedding);
    norm("embeddings.LayerNorm", &w.embeddingNorm, &w.embeddingNormBias);
    for (int i = 0; i < c.layers; ++i) {
        const std::string p = "transformer.layer." + std::to_string(i) + ".";
        LayerWeights& l = list.layer(i);
        list.linear(p + "attention.q_lin", d, d, &l.query, &l.queryBias);
        list.linear(p + "attention.k_lin", d, d, &l.key, &l.keyBias);
        list.linear(p + "attention.v_lin", d, d, &l.value, &l.valueBias);
        list.linear(p + "attention.out_lin", d, d, &l.output, &l.outputBias);
        list.linear(p + "ffn.lin1", I, d, &l.up, &l.upBias);
        list.linear(p + "ffn.lin2", d, I, &l.down, &l.downBias);
        norm(p + "sa_layer_norm", &l.norm1, &l.norm1Bias);
        norm(p + "output_layer_norm", &l.norm2, &l.norm2Bias);
    }
    return list.take();
}

// MPNetModel (mpnet.*): BERT's post-norm layers under MPNet's names (attention.attn.q, ...,
// attention.LayerNorm), no token types, and one relative-position bias table for every layer.
std::vector<TensorSpec> mpnetNames(const Config& c, ModelWeights& w) {
    TensorList list(c, w);
    const long long d = c.hidden, I = c.intermediate;
    list.add("embeddings.word_embeddings.weight", {c.vocab, d}, &w.tokenEmbedding);
    list.add("embeddings.position_embeddings.weight", {c.positions, d}, &w.positionEmbedding);
    list.add("embeddings.LayerNorm.weight", {d}, &w.embeddingNorm);
    list.add("embeddings.LayerNorm.bias", {d}, &w.embeddingNormBias);
    list.add("encoder.relative_attention_bias.weight", {c.relativeBuckets, c.heads},
             &w.relativeBias);
    for (int i = 0; i < c.layers; ++i) {
        const std::string p = "encoder.layer." + std::to_string(i) + ".";
        LayerWeights& l = list.layer(i);
        list.linear(p + "attention.attn.q", d, d, &l.query, &l.queryBias);
        list.linear(p + "attention.attn.k", d, d, &l.key, &l.keyBias);
        list.linear(p + "attention.attn.v", d, d, &l.value, &l.valueBias);
        list.linear(p + "attention.attn.o", d, d, &l.output, &l.outputBias);
        list.linear(p + "intermediate.dense", I, d, &l.up, &l.upBias);
        list.linear(p + "output.dense", d, I, &l.down, &l.downBias);
        list.add(p + "attention.LayerNorm.weight", {d}, &l.norm1);
        list.add(p + "attention.LayerNorm.bias", {d}, &l.norm1Bias);
        list.add(p + "output.LayerNorm.weight", {d}, &l.norm2);
        list.add(p + "output.LayerNorm.bias", {d}, &l.norm2Bias);
    }
    return list.take();
}

// ModernBertModel (model.*): a fused Wqkv and Wi (GeGLU's [input | gate]), no attention norm in
// layer 0, biases only where the config asks for them, a final norm.
std::vector<TensorSpec> modernbertNames(const Config& c, ModelWeights& w) {
    TensorList list(c, w);
    const long long d = c.hidden, I = c.intermediate;
    const bool normBias = c.architecture().norm == NormType::LayerNorm;
    const auto norm = [&](const std::string& name, TensorRef* weight, TensorRef* bias) {
        list.add(name + ".weight", {d}, weight);
        if (normBias) list.add(name + ".bias", {d}, bias);
    };
    const auto linear = [&](const std::string& name, long long out, long long in, bool bias,
                            TensorRef* weight, TensorRef* biasSlot) {
        list.add(name + ".weight", {out, in}, weight);
        if (bias) list.add(name + ".bias", {out}, biasSlot);
    };
    list.add("embeddings.tok_embeddings.weight", {c.vocab, d}, &w.tokenEmbedding);
    norm("embeddings.norm", &w.embeddingNorm, &w.embeddingNormBias);
    for (int i = 0; i < c.layers; ++i) {
        const std::string p = "layers." + std::to_string(i) + ".";
        LayerWeights& l = list.layer(i);
        if (i > 0) norm(p + "attn_norm", &l.norm1, &l.norm1Bias);
        linear(p + "attn.Wqkv", 3 * d, d, c.attentionBias, &l.qkv, &l.qkvBias);
        linear(p + "attn.Wo", d, d, c.attentionBias, &l.output, &l.outputBias);
        norm(p + "mlp_norm", &l.norm2, &l.norm2Bias);
        linear(p + "mlp.Wi", 2 * I, d, c.mlpBias, &l.gateUp, &l.gateUpBias);
        linear(p + "mlp.Wo", d, I, c.mlpBias, &l.down, &l.downBias);
    }
    norm("final_norm", &w.finalNorm, &w.finalNormBias);
    return list.take();
}

// DebertaV2Model (deberta.*): embeddings of width E (projected to d by embed_proj when E ≠ d), a
// position table only with position_biased_input, token types only when type_vocab_size > 0;
// BERT's post-norm layers with query_proj / key_proj / value_proj; the shared relative-position
// embeddings (LayerNorm'ed with norm_rel_ebd), each layer's own position projections unless
// share_att_key; deberta-v2-xlarge's ConvLayer.
std::vector<TensorSpec> debertaNames(const Config& c, ModelWeights& w) {
    TensorList list(c, w);
    const long long d = c.hidden, I = c.intermediate, E = c.embeddingWidth();
    const Config::DisentangledAttention& da = c.disentangled;
    list.add("embeddings.word_embeddings.weight", {c.vocab, E}, &w.tokenEmbedding);
    if (c.architecture().positions == PositionKind::Learned)
        list.add("embeddings.position_embeddings.weight", {c.positions, E}, &w.positionEmbedding);
    if (c.tokenTypes > 0)
        list.add("embeddings.token_type_embeddings.weight", {c.tokenTypes, E},
                 &w.tokenTypeEmbedding);
    if (E != d) list.add("embeddings.embed_proj.weight", {d, E}, &w.embeddingProjection);
    list.layerNorm("embeddings.LayerNorm", d, &w.embeddingNorm, &w.embeddingNormBias);
    if (c.convKernel > 0) {
        list.add("encoder.conv.conv.weight", {d, d / c.convGroups, c.convKernel}, &w.conv);
        list.add("encoder.conv.conv.bias", {d}, &w.convBias);
        list.layerNorm("encoder.conv.LayerNorm", d, &w.convNorm, &w.convNormBias);
    }
    if (da.any()) {
        list.add("encoder.rel_embeddings.weight", {2LL * da.span, d}, &w.relativeEmbeddings);
        if (da.normEmbeddings)
            list.layerNorm("encoder.LayerNorm", d, &w.relativeEmbeddingsNorm,
                           &w.relativeEmbeddingsNormBias);
    }
    for (int i = 0; i < c.layers; ++i) {
        const std::string p = "encoder.layer." + std::to_string(i) + ".";
        LayerWeights& l = list.layer(i);
        list.linear(p + "attention.self.query_proj", d, d, &l.query, &l.queryBias);
        list.linear(p + "attention.self.key_proj", d, d, &l.key, &l.keyBias);
        list.linear(p + "attention.self.value_proj", d, d, &l.value, &l.valueBias);
        if (!da.shareKeys && da.contentToPosition)
            list.linear(p + "attention.self.pos_key_proj", d, d, &l.positionKey,
                        &l.positionKeyBias);
        if (!da.shareKeys && da.positionToContent)
            list.linear(p + "attention.self.pos_query_proj", d, d, &l.positionQuery,
                        &l.positionQueryBias);
        list.linear(p + "attention.output.dense", d, d, &l.output, &l.outputBias);
        list.layerNorm(p + "attention.output.LayerNorm", d, &l.norm1, &l.norm1Bias);
        list.linear(p + "intermediate.dense", I, d, &l.up, &l.upBias);
        list.linear(p + "output.dense", d, I, &l.down, &l.downBias);
        list.layerNorm(p + "output.LayerNorm", d, &l.norm2, &l.norm2Bias);
    }
    return list.take();
}

// ---- Masked-LM heads ----

// BertForMaskedLM: cls.predictions (BertLMPredictionHead: transform.dense, the hidden_act,
// transform.LayerNorm; the decoder, its bias shared with cls.predictions.bias).
MaskedLmHeadNames bertMaskedLmHead(const Config& c) {
    MaskedLmHeadNames h;
    h.marks = {"cls.predictions."};
    h.dense = "cls.predictions.transform.dense";
    h.denseOut = c.hidden;
    h.norm = "cls.predictions.transform.LayerNorm";
    h.decoder = "cls.predictions.decoder";
    h.bias = MaskedLmHeadNames::Bias::Shared;
    h.headBias = "cls.predictions.bias";
    return h;
}

// RobertaLMHead (XLMRobertaLMHead and MPNetLMHead are copies): lm_head.dense, gelu,
// lm_head.layer_norm, the decoder, lm_head.bias.
MaskedLmHeadNames robertaMaskedLmHead(const Config& c) {
    MaskedLmHeadNames h;
    h.marks = {"lm_head."};
    h.dense = "lm_head.dense";
    h.denseOut = c.hidden;
    h.norm = "lm_head.layer_norm";
    h.decoder = "lm_head.decoder";
    h.bias = MaskedLmHeadNames::Bias::Shared;
    h.headBias = "lm_head.bias";
    return h;
}

// DistilBertForMaskedLM: vocab_transform, the activation, vocab_layer_norm, vocab_projector (its
// weight tied, its bias its own).
MaskedLmHeadNames distilbertMaskedLmHead(const Config& c) {
    MaskedLmHeadNames h;
    h.marks = {"vocab_transform.", "vocab_layer_norm.", "vocab_projector."};
    h.dense = "vocab_transform";
    h.denseOut = c.hidden;
    h.norm = "vocab_layer_norm";
    h.decoder = "vocab_projector";
    h.bias = MaskedLmHeadNames::Bias::Decoder;
    return h;
}

// ModernBertForMaskedLM: head.dense (its bias with classifier_bias), classifier_activation,
// head.norm (its bias with norm_bias), the decoder tied, decoder.bias with decoder_bias.
// ModernBertFor{Sequence,Token}Classification store head.* beside classifier.*: no MLM head.
MaskedLmHeadNames modernbertMaskedLmHead(const Config& c) {
    MaskedLmHeadNames h;
    h.marks = {"decoder."};
    h.marksUnlessClassifier = {"head."};
    h.classifierMark = "classifier.";
    h.dense = "head.dense";
    h.denseOut = c.hidden;
    h.denseBias = c.maskedLm.denseBias;
    h.norm = "head.norm";
    h.normBias = c.maskedLm.normBias;
    h.decoder = "decoder";
    h.bias =
        c.maskedLm.decoderBias ? MaskedLmHeadNames::Bias::Decoder : MaskedLmHeadNames::Bias::None;
    return h;
}

// DebertaV2ForMaskedLM, as config.json's `legacy` picks it. Legacy (the default):
// LegacyDebertaV2OnlyMLMHead, cls.predictions.transform.dense [E, d], the hidden_act, its
// LayerNorm [E], the decoder tied to the [V, E] word embeddings, its bias shared with
// cls.predictions.bias. Otherwise DebertaV2OnlyMLMHead: lm_predictions.lm_head.dense [d, d],
// LayerNorm, always the word embeddings, lm_predictions.lm_head.bias.
MaskedLmHeadNames debertaMaskedLmHead(const Config& c) {
    MaskedLmHeadNames h;
    if (c.maskedLm.legacy) {
        h.marks = {"cls.predictions."};
        h.dense = "cls.predictions.transform.dense";
        h.denseOut = c.embeddingWidth();
        h.norm = "cls.predictions.transform.LayerNorm";
        h.decoder = "cls.predictions.decoder";
        h.bias = MaskedLmHeadNames::Bias::Shared;
        h.headBias = "cls.predictions.bias";
    } else {
        h.marks = {"lm_predictions.lm_head."};
        h.dense = "lm_predictions.lm_head.dense";
        h.denseOut = c.hidden;
        h.norm = "lm_predictions.lm_head.LayerNorm";
        h.bias = MaskedLmHeadNames::Bias::Head;
        h.headBias = "lm_predictions.lm_head.bias";
    }
    return h;
}

// LlamaForCausalLM and the families that keep its names (model.*), as the architecture's axes
// shape them: the norms where they sit, q, k and v separate or fused (Phi-3's qkv_proj), the q/k
// norm per head or over the full width, gate and up separate or fused (gate_up_proj).
std::vector<TensorSpec> llamaNames(const Config& c, ModelWeights& w) {
    TensorList list(c, w);
    const Architecture a = c.architecture();
    const long long d = c.hidden, I = c.intermediate, hd = c.headDim;
    const long long width = static_cast<long long>(c.heads) * hd, kvWidth = c.kvHeads * hd;
    list.add("embed_tokens.weight", {c.vocab, d}, &w.tokenEmbedding);
    for (int i = 0; i < c.layers; ++i) {
        const std::string p = "layers." + std::to_string(i) + ".";
        LayerWeights& l = list.layer(i);
        switch (a.placement) {
            case NormPlacement::Sandwich:
                list.add(p + "input_layernorm.weight", {d}, &l.norm1);
                list.add(p + "post_attention_layernorm.weight", {d}, &l.attentionOutputNorm);
                list.add(p + "pre_feedforward_layernorm.weight", {d}, &l.norm2);
                list.add(p + "post_feedforward_layernorm.weight", {d}, &l.mlpOutputNorm);
                break;
            case NormPlacement::PostOnly:
                list.add(p + "post_attention_layernorm.weight", {d}, &l.attentionOutputNorm);
                list.add(p + "post_feedforward_layernorm.weight", {d}, &l.mlpOutputNorm);
                break;
            default:
                list.add(p + "input_layernorm.weight", {d}, &l.norm1);
                list.add(p + "post_attention_layernorm.weight", {d}, &l.norm2);
                break;
        }
        const bool bias = c.attentionBias, mlpBias = c.mlpBias;
        if (a.qkv == QkvStorage::Fused) {
            list.linear(p + "self_attn.qkv_proj", width + 2 * kvWidth, d, &l.qkv, &l.qkvBias,
                        false);
        } else {
            list.linear(p + "self_attn.q_proj", width, d, &l.query, &l.queryBias, bias);
            list.linear(p + "self_attn.k_proj", kvWidth, d, &l.key, &l.keyBias, bias);
            list.linear(p + "self_attn.v_proj", kvWidth, d, &l.value, &l.valueBias, bias);
        }
        list.linear(p + "self_attn.o_proj", d, width, &l.output, &l.outputBias, c.outputBias);
        if (a.mlpStorage == MlpStorage::Fused) {
            list.linear(p + "mlp.gate_up_proj", 2 * I, d, &l.gateUp, nullptr, false);
        } else {
            list.linear(p + "mlp.gate_proj", I, d, &l.gate, &l.gateBias, mlpBias);
            list.linear(p + "mlp.up_proj", I, d, &l.up, &l.upBias, mlpBias);
        }
        list.linear(p + "mlp.down_proj", d, I, &l.down, &l.downBias, mlpBias);
        if (a.qkNorm == QkNormKind::PerHead) {
            list.add(p + "self_attn.q_norm.weight", {hd}, &l.queryNorm);
            list.add(p + "self_attn.k_norm.weight", {hd}, &l.keyNorm);
        } else if (a.qkNorm == QkNormKind::FullWidth) {
            list.add(p + "self_attn.q_norm.weight", {width}, &l.queryNorm);
            list.add(p + "self_attn.k_norm.weight", {kvWidth}, &l.keyNorm);
        }
    }
    list.add("norm.weight", {d}, &w.finalNorm);
    list.languageModelHead(c);
    return list.take();
}

// Gemma3ForConditionalGeneration's text tower: Llama's names under language_model.model. (the
// Hub's checkpoints) or model.language_model. (later saves), the head language_model.lm_head or
// lm_head.
std::vector<TensorSpec> wrappedGemma3Names(const Config& c, ModelWeights& w) {
    std::vector<TensorSpec> specs = llamaNames(c, w);
    for (TensorSpec& spec : specs) {
        if (spec.topLevel) spec.alias = "language_model.lm_head.weight";
    }
    return specs;
}

// GPTNeoXForCausalLM (gpt_neox.*): query_key_value holds each head's [q | k | v] in turn; the
// head is embed_out. Pythia's attention.bias, masked_bias and rotary_emb.inv_freq are buffers,
// not weights: never read.
std::vector<TensorSpec> gptNeoxNames(const Config& c, ModelWeights& w) {
    TensorList list(c, w);
    const long long d = c.hidden, I = c.intermediate;
    list.add("embed_in.weight", {c.vocab, d}, &w.tokenEmbedding);
    for (int i = 0; i < c.layers; ++i) {
        const std::string p = "layers." + std::to_string(i) + ".";
        LayerWeights& l = list.layer(i);
        list.layerNorm(p + "input_layernorm", d, &l.norm1, &l.norm1Bias);
        list.layerNorm(p + "post_attention_layernorm", d, &l.norm2, &l.norm2Bias);
        list.linear(p + "attention.query_key_value", 3 * d, d, &l.qkv, &l.qkvBias, c.attentionBias);
        list.linear(p + "attention.dense", d, d, &l.output, &l.outputBias, c.outputBias);
        list.linear(p + "mlp.dense_h_to_4h", I, d, &l.up, &l.upBias);
        list.linear(p + "mlp.dense_4h_to_h", d, I, &l.down, &l.downBias);
    }
    list.layerNorm("final_layer_norm", d, &w.finalNorm, &w.finalNormBias);
    list.languageModelHead(c, "embed_out.weight");
    return list.take();
}

// ---- Encoder–decoder families: each names one stack's tensors (Config::stack) ----

// The decoder stack's LM head of an encoder–decoder model, whose token table is `table`: tied, it
// is the table, and a stored lm_head.weight must hold the same values (listed as a copy of the
// table just added); untied, lm_head.weight is required. transformers 5's T5 reads a stored one
// whatever the tie says (storedLmHeadWins).
void encoderDecoderHead(const Config& c, ModelWeights& w, TensorList& list,
                        const std::string& table) {
    if (c.storedLmHeadWins) {
        list.topLevel("lm_head.weight", {c.vocab, c.hidden}, &w.lmHead, true);
    } else if (c.tieWordEmbeddings) {
        list.copy("lm_head.weight",
                  " although tie_word_embeddings is true (transformers 4 loads both names into one "
                  "tied parameter, so the values kept depend on the file; 5 keeps the stored "
                  "lm_head.weight): set tie_word_embeddings false or store equal values",
                  true, false);
    } else {
        list.topLevel(
            "lm_head.weight", {c.vocab, c.hidden}, &w.lmHead, false,
            "tie_word_embeddings is false (transformers 4 would initialize it at random, 5 "
            "ties it to " +
                table + "): store lm_head.weight");
    }
}

// T5ForConditionalGeneration / T5Model (no prefix): the shared token table, block 0's relative
// position bias (used by every block of the stack; later blocks' and the decoder's
// EncDecAttention's are not read, as in Hugging Face), each block's self-attention (layer.0), the
// decoder's cross-attention (layer.1), the feed-forward (DenseReluDense wi / wo, or gated wi_0 /
// wi_1 / wo), no biases anywhere, the stack's final_layer_norm.
std::vector<TensorSpec> t5Names(const Config& c, ModelWeights& w) {
    TensorList list(c, w);
    const bool decoder = c.stack == Config::Stack::Decoder;
    const std::string stack = decoder ? "decoder." : "encoder.";
    const long long d = c.hidden, I = c.intermediate,
                    inner = static_cast<long long>(c.heads) * c.headDim;
    const std::string sameParameter =
        ": transformers holds the three names as one parameter (T5Stack(config, self.shared)), "
        "so the values kept depend on the load order; store equal copies";
    list.add("shared.weight", {c.vocab, d}, &w.tokenEmbedding);
    list.copy("encoder.embed_tokens.weight", sameParameter);
    list.copy("decoder.embed_tokens.weight", sameParameter);
    if (decoder) encoderDecoderHead(c, w, list, "shared.weight");
    list.add(stack + "block.0.layer.0.SelfAttention.relative_attention_bias.weight",
             {c.relativeBuckets, c.heads}, &w.relativeBias);
    const bool gated = c.architecture().mlp == MlpKind::Gated;
    for (int i = 0; i < c.layers; ++i) {
        const std::string p = stack + "block." + std::to_string(i) + ".layer.";
        LayerWeights& l = list.layer(i);
        list.add(p + "0.layer_norm.weight", {d}, &l.norm1);
        list.add(p + "0.SelfAttention.q.weight", {inner, d}, &l.query);
        list.add(p + "0.SelfAttention.k.weight", {inner, d}, &l.key);
        list.add(p + "0.SelfAttention.v.weight", {inner, d}, &l.value);
        list.add(p + "0.SelfAttention.o.weight", {d, inner}, &l.output);
        std::string ff = p + "1.";
        if (decoder) {
            list.add(p + "1.layer_norm.weight", {d}, &l.crossNorm);
            list.add(p + "1.EncDecAttention.q.weight", {inner, d}, &l.crossQuery);
            list.add(p + "1.EncDecAttention.k.weight", {inner, d}, &l.crossKey);
            list.add(p + "1.EncDecAttention.v.weight", {inner, d}, &l.crossValue);
            list.add(p + "1.EncDecAttention.o.weight", {d, inner}, &l.crossOutput);
            ff = p + "2.";
        }
        list.add(ff + "layer_norm.weight", {d}, &l.norm2);
        if (gated) {
            list.add(ff + "DenseReluDense.wi_0.weight", {I, d}, &l.gate);
            list.add(ff + "DenseReluDense.wi_1.weight", {I, d}, &l.up);
        } else {
            list.add(ff + "DenseReluDense.wi.weight", {I, d}, &l.up);
        }
        list.add(ff + "DenseReluDense.wo.weight", {d, I}, &l.down);
    }
    list.add(stack + "final_layer_norm.weight", {d}, &w.finalNorm);
    return list.take();
}

// BartForConditionalGeneration / MarianMTModel (model.*; BartModel / MarianModel without): the
// token table (model.shared, whose stored copies are the stacks' embed_tokens; Marian without
// share_encoder_decoder_embeddings: each stack's own), the stack's positions (BART's learned
// table of max_position_embeddings + 2 rows; Marian's sinusoids, stored or computed) and BART's
// layernorm_embedding, post-norm layers of nn.Linear with biases (self_attn, the decoder's
// encoder_attn, fc1, fc2, their LayerNorms); the decoder's LM head and final_logits_bias.
std::vector<TensorSpec> bartNames(const Config& c, ModelWeights& w) {
    TensorList list(c, w);
    const bool decoder = c.stack == Config::Stack::Decoder;
    const std::string stack = decoder ? "decoder." : "encoder.";
    const long long d = c.hidden, I = c.intermediate;
    std::string table = stack + "embed_tokens.weight";
    if (c.shareStackEmbeddings) {
        const std::string sameParameter =
            ": transformers holds them as one parameter (the encoder's and decoder's embed_tokens "
            "are model.shared), so the values kept depend on the load order; store equal copies";
        list.add("shared.weight", {c.vocab, d}, &w.tokenEmbedding);
        list.copy("encoder.embed_tokens.weight", sameParameter);
        list.copy("decoder.embed_tokens.weight", sameParameter);
        table = "shared.weight";
    } else {
        list.add(table, {c.vocab, d}, &w.tokenEmbedding);
    }
    if (decoder) {
        encoderDecoderHead(c, w, list, table);
        list.topLevel("final_logits_bias", {1, c.vocab}, &w.logitsBias, true);
    }
    if (c.sinusoidalPositionTable)
        list.optional(stack + "embed_positions.weight", {c.positions, d}, &w.positionEmbedding);
    else
        list.add(stack + "embed_positions.weight", {c.positions, d}, &w.positionEmbedding);
    if (c.architecture().embeddingNorm)
        list.layerNorm(stack + "layernorm_embedding", d, &w.embeddingNorm, &w.embeddingNormBias);
    for (int i = 0; i < c.layers; ++i) {
        const std::string p = stack + "layers." + std::to_string(i) + ".";
        LayerWeights& l = list.layer(i);
        list.linear(p + "self_attn.q_proj", d, d, &l.query, &l.queryBias);
        list.linear(p + "self_attn.k_proj", d, d, &l.key, &l.keyBias);
        list.linear(p + "self_attn.v_proj", d, d, &l.value, &l.valueBias);
        list.linear(p + "self_attn.out_proj", d, d, &l.output, &l.outputBias);
        list.layerNorm(p + "self_attn_layer_norm", d, &l.norm1, &l.norm1Bias);
        if (decoder) {
            list.linear(p + "encoder_attn.q_proj", d, d, &l.crossQuery, &l.crossQueryBias);
            list.linear(p + "encoder_attn.k_proj", d, d, &l.crossKey, &l.crossKeyBias);
            list.linear(p + "encoder_attn.v_proj", d, d, &l.crossValue, &l.crossValueBias);
            list.linear(p + "encoder_attn.out_proj", d, d, &l.crossOutput, &l.crossOutputBias);
            list.layerNorm(p + "encoder_attn_layer_norm", d, &l.crossNorm, &l.crossNormBias);
        }
        list.linear(p + "fc1", I, d, &l.up, &l.upBias);
        list.linear(p + "fc2", d, I, &l.down, &l.downBias);
        list.layerNorm(p + "final_layer_norm", d, &l.norm2, &l.norm2Bias);
    }
    return list.take();
}

// T5: pre-norm RMS layers without biases, no position table, a bucketed relative-position bias
// on the (unscaled) scores of each stack's self-attention.
Architecture t5Architecture() {
    Architecture a;
    a.stacks = Stacks::EncoderDecoder;
    a.norm = NormType::RmsNorm;
    a.placement = NormPlacement::Pre;
    a.positions = PositionKind::None;
    a.mlp = MlpKind::Plain;
    a.scoreTerms = ScoreTermKind::BucketBias;
    return a;
}

// BART: BERT's post-norm layers in two stacks, learned positions, a norm on the embeddings.
Architecture bartArchitecture() {
    Architecture a;
    a.stacks = Stacks::EncoderDecoder;
    a.norm = NormType::LayerNorm;
    a.placement = NormPlacement::Post;
    a.positions = PositionKind::Learned;
    a.mlp = MlpKind::Plain;
    a.embeddingNorm = true;
    return a;
}

// Marian: BART's layers; sinusoid positions (a table, computed when not stored), no norm on the
// embeddings.
Architecture marianArchitecture() {
    Architecture a = bartArchitecture();
    a.embeddingNorm = false;
    return a;
}

Architecture gpt2Architecture() {
    Architecture a;
    a.decoder = true;
    a.norm = NormType::LayerNorm;
    a.placement = NormPlacement::Pre;
    a.qkv = QkvStorage::Fused;
    a.layout = WeightLayout::Conv1D;
    a.positions = PositionKind::Learned;
    a.mlp = MlpKind::Plain;
    return a;
}

Architecture bertArchitecture() {
    Architecture a;
    a.decoder = false;
    a.norm = NormType::LayerNorm;
    a.placement = NormPlacement::Post;
    a.qkv = QkvStorage::Separate;
    a.layout = WeightLayout::Linear;
    a.positions = PositionKind::Learned;
    a.mlp = MlpKind::Plain;
    a.tokenTypes = true;
    a.embeddingNorm = true;
    return a;
}

// BERT's layers; positions numbered from the token ids.
Architecture robertaArchitecture() {
    Architecture a = bertArchitecture();
    a.positions = PositionKind::LearnedAfterPadding;
    return a;
}

// BERT's layers and embeddings without token types.
Architecture distilbertArchitecture() {
    Architecture a = bertArchitecture();
    a.tokenTypes = false;
    return a;
}

// Pre-norm LayerNorm without biases (with them when norm_bias), rotary positions, fused q k v,
// GeGLU from one fused product, no attention norm in layer 0, a norm on the embeddings.
Architecture modernbertArchitecture() {
    Architecture a;
    a.decoder = false;
    a.norm = NormType::LayerNormNoBias;
    a.placement = NormPlacement::Pre;
    a.qkv = QkvStorage::Fused;
    a.positions = PositionKind::Rotary;
    a.mlp = MlpKind::Gated;
    a.mlpStorage = MlpStorage::Fused;
    a.embeddingNorm = true;
    a.firstLayerAttentionNorm = false;
    return a;
}

// BERT's post-norm layers with disentangled attention; learned positions unless the config says
// otherwise; DeBERTa's padding.
Architecture debertaArchitecture() {
    Architecture a = bertArchitecture();
    a.scoreTerms = ScoreTermKind::Disentangled;
    a.maskedPadding = true;
    return a;
}

// RoBERTa's positions without token types, and a relative-position bias on the scores.
Architecture mpnetArchitecture() {
    Architecture a = robertaArchitecture();
    a.tokenTypes = false;
    a.scoreTerms = ScoreTermKind::BucketBias;
    return a;
}

Architecture llamaArchitecture(QkNormKind qkNorm) {
    Architecture a;
    a.decoder = true;
    a.norm = NormType::RmsNorm;
    a.placement = NormPlacement::Pre;
    a.qkv = QkvStorage::Separate;
    a.layout = WeightLayout::Linear;
    a.positions = PositionKind::Rotary;
    a.mlp = MlpKind::Gated;
    a.qkNorm = qkNorm;
    return a;
}

// Gemma: RMSNorm times (1 + w); Gemma 2 and 3 add norms after each block.
Architecture gemmaArchitecture(NormPlacement placement, QkNormKind qkNorm) {
    Architecture a = llamaArchitecture(qkNorm);
    a.norm = NormType::RmsNormPlusOneWeight;
    a.placement = placement;
    return a;
}

Architecture phi3Architecture() {
    Architecture a = llamaArchitecture(QkNormKind::None);
    a.qkv = QkvStorage::Fused;
    a.mlpStorage = MlpStorage::Fused;
    return a;
}

// The parallel residual is GPTNeoXConfig's default; use_parallel_residual false makes it Pre.
Architecture gptNeoxArchitecture() {
    Architecture a;
    a.decoder = true;
    a.norm = NormType::LayerNorm;
    a.placement = NormPlacement::Parallel;
    a.qkv = QkvStorage::FusedInterleaved;
    a.layout = WeightLayout::Linear;
    a.positions = PositionKind::Rotary;
    a.mlp = MlpKind::Plain;
    return a;
}

Architecture olmo2Architecture() {
    Architecture a = llamaArchitecture(QkNormKind::FullWidth);
    a.placement = NormPlacement::PostOnly;
    return a;
}

}  // namespace

const std::vector<FamilyRow>& familyTable() {
    // Indexed by Family: familyRow checks that each row sits at its own value.
    static const std::vector<FamilyRow> table = {
        {Family::Gpt2,
         "gpt2",
         gpt2Architecture(),
         {"transformer.", ""},
         "wte.weight",
         "n_positions",
         50256,
         2,
         gpt2Names},
        {Family::Bert,
         "bert",
         bertArchitecture(),
         {"bert.", ""},
         "embeddings.word_embeddings.weight",
         "max_position_embeddings",
         -1,
         0,
         bertNames,
         bertMaskedLmHead},
        {Family::Llama,
         "llama",
         llamaArchitecture(QkNormKind::None),
         {"model.", ""},
         "embed_tokens.weight",
         "max_position_embeddings",
         1,
         1,
         llamaNames},
        {Family::Qwen3,
         "qwen3",
         llamaArchitecture(QkNormKind::PerHead),
         {"model.", ""},
         "embed_tokens.weight",
         "max_position_embeddings",
         -1,
         0,
         llamaNames},
        {Family::Qwen2,
         "qwen2",
         llamaArchitecture(QkNormKind::None),
         {"model.", ""},
         "embed_tokens.weight",
         "max_position_embeddings",
         -1,
         0,
         llamaNames},
        {Family::Mistral,
         "mistral",
         llamaArchitecture(QkNormKind::None),
         {"model.", ""},
         "embed_tokens.weight",
         "max_position_embeddings",
         1,
         0,
         llamaNames},
        {Family::Gemma,
         "gemma",
         gemmaArchitecture(NormPlacement::Pre, QkNormKind::None),
         {"model.", ""},
         "embed_tokens.weight",
         "max_position_embeddings",
         2,
         0,
         llamaNames},
        {Family::Gemma2,
         "gemma2",
         gemmaArchitecture(NormPlacement::Sandwich, QkNormKind::None),
         {"model.", ""},
         "embed_tokens.weight",
         "max_position_embeddings",
         2,
         0,
         llamaNames},
        {Family::Gemma3Text,
         "gemma3_text",
         gemmaArchitecture(NormPlacement::Sandwich, QkNormKind::PerHead),
         {"model.", ""},
         "embed_tokens.weight",
         "max_position_embeddings",
         2,
         0,
         llamaNames},
        {Family::Gemma3,
         "gemma3",
         gemmaArchitecture(NormPlacement::Sandwich, QkNormKind::PerHead),
         {"language_model.model.", "model.language_model."},
         "embed_tokens.weight",
         "text_config.max_position_embeddings",
         2,
         0,
         wrappedGemma3Names},
        {Family::Phi3,
         "phi3",
         phi3Architecture(),
         {"model.", ""},
         "embed_tokens.weight",
         "max_position_embeddings",
         1,
         0,
         llamaNames},
        {Family::GptNeox,
         "gpt_neox",
         gptNeoxArchitecture(),
         {"gpt_neox.", ""},
         "embed_in.weight",
         "max_position_embeddings",
         0,
         0,
         gptNeoxNames},
        {Family::Olmo2,
         "olmo2",
         olmo2Architecture(),
         {"model.", ""},
         "embed_tokens.weight",
         "max_position_embeddings",
         -1,
         0,
         llamaNames},
        {Family::SmolLm3,
         "smollm3",
         llamaArchitecture(QkNormKind::None),
         {"model.", ""},
         "embed_tokens.weight",
         "max_position_embeddings",
         128000,
         0,
         llamaNames},
        // RobertaModel saves no prefix; RobertaForMaskedLM and XLMRoberta* save "roberta.".
        {Family::Roberta,
         "roberta",
         robertaArchitecture(),
         {"roberta.", ""},
         "embeddings.word_embeddings.weight",
         "max_position_embeddings",
         0,
         0,
         bertNames,
         robertaMaskedLmHead},
        {Family::XlmRoberta,
         "xlm-roberta",
         robertaArchitecture(),
         {"roberta.", ""},
         "embeddings.word_embeddings.weight",
         "max_position_embeddings",
         0,
         0,
         bertNames,
         robertaMaskedLmHead},
        // DistilBertModel saves no prefix; DistilBertFor* save "distilbert.".
        {Family::DistilBert,
         "distilbert",
         distilbertArchitecture(),
         {"distilbert.", ""},
         "embeddings.word_embeddings.weight",
         "max_position_embeddings",
         -1,
         0,
         distilbertNames,
         distilbertMaskedLmHead},
        // MPNetModel saves no prefix; MPNetForMaskedLM and MPNetFor* save "mpnet.".
        {Family::Mpnet,
         "mpnet",
         mpnetArchitecture(),
         {"mpnet.", ""},
         "embeddings.word_embeddings.weight",
         "max_position_embeddings",
         0,
         0,
         mpnetNames,
         robertaMaskedLmHead},
        // ModernBertModel saves no prefix; ModernBertForMaskedLM and ModernBertFor* save "model.".
        {Family::ModernBert,
         "modernbert",
         modernbertArchitecture(),
         {"model.", ""},
         "embeddings.tok_embeddings.weight",
         "max_position_embeddings",
         50281,
         0,
         modernbertNames,
         modernbertMaskedLmHead},
        // DebertaV2Model saves no prefix; DebertaV2ForMaskedLM and DebertaV2For* save "deberta.".
        {Family::DebertaV2,
         "deberta-v2",
         debertaArchitecture(),
         {"deberta.", ""},
         "embeddings.word_embeddings.weight",
         "max_position_embeddings",
         -1,
         0,
         debertaNames,
         debertaMaskedLmHead},
        // T5ForConditionalGeneration and T5Model save no prefix.
        {Family::T5,
         "t5",
         t5Architecture(),
         {""},
         "encoder.block.0.layer.0.SelfAttention.q.weight",
         "",
         -1,
         0,
         t5Names},
        // BartForConditionalGeneration saves "model.", BartModel no prefix.
        {Family::Bart,
         "bart",
         bartArchitecture(),
         {"model.", ""},
         "encoder.layers.0.self_attn.q_proj.weight",
         "max_position_embeddings",
         0,
         0,
         bartNames},
        // MarianMTModel saves "model.", MarianModel no prefix.
        {Family::Marian,
         "marian",
         marianArchitecture(),
         {"model.", ""},
         "encoder.layers.0.self_attn.q_proj.weight",
         "max_position_embeddings",
         -1,
         0,
         bartNames},
    };
    return table;
}

const FamilyRow& familyRow(Family family) {
    const std::vector<FamilyRow>& table = familyTable();
    const auto index = static_cast<std::size_t>(family);
    if (index >= table.size() || table[index].family != family)
        throw ModelError("the family table has no row for family " + std::to_string(index));
    return table[index];
}

const FamilyRow* familyRowNamed(std::string_view modelType) {
    for (const FamilyRow& row : familyTable()) {
        if (modelType == row.modelType) return &row;
    }
    return nullptr;
}

std::string supportedFamilies() {
    std::string names;
    for (const FamilyRow& row : familyTable())
        names += (names.empty() ? "" : ", ") + std::string(row.modelType);
    return names;
}

std::string encoderDecoderFamilyNames() {
    std::vector<std::string> names;
    for (const FamilyRow& row : familyTable())
        if (row.architecture.stacks == Stacks::EncoderDecoder) names.push_back(row.modelType);
    std::string text;
    for (std::size_t i = 0; i < names.size(); ++i)
        text += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
    return text;
}

std::vector<const FamilyRow*> trainableFamilies() {
    std::vector<const FamilyRow*> rows;
    for (const FamilyRow& row : familyTable()) {
        if (row.trainingChoice > 0) rows.push_back(&row);
    }
    std::sort(rows.begin(), rows.end(), [](const FamilyRow* a, const FamilyRow* b) {
        return a->trainingChoice < b->trainingChoice;
    });
    return rows;
}

std::string trainableFamilyNames() {
    std::string names;
    const std::vector<const FamilyRow*> rows = trainableFamilies();
    for (std::size_t i = 0; i < rows.size(); ++i) {
        if (i > 0) names += i + 1 == rows.size() ? " or " : ", ";
        names += rows[i]->modelType;
    }
    return names;
}

std::string unimplementedAxes(const Architecture& a) {
    // Each axis is implemented on its own (core/model/model_forward.cpp combines them freely);
    // these values are not implemented yet.
    std::vector<std::string> missing;
    if (a.positions == PositionKind::Sinusoid) missing.push_back("positions: sinusoid");
    if (a.positions == PositionKind::RelativeBias) missing.push_back("positions: relative bias");
    std::string text;
    for (const std::string& m : missing)
        text += (text.empty() ? "" : "; ") + m;
    return text;
}

}  // namespace ae::model
